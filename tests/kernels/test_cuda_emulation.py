"""The CUDA kernels' own source executed on the host (csrc/cuda/emulation/host_prelude.h),
through torchtally._C_cuda's real enqueue and launch code on the stand-in driver, and compared
bit for bit with the C core (torchtally.kernels.cuda.emulation). `python -m torchtally.cuda
emulate` runs every kernel of kernel_table.h on every case and finds nothing different; a second
seed on a wider device runs every eighth case. Planted bugs in a copy of the source (a
transposed index, a missing barrier) make the comparison fail, and so does a warp collective
that not every lane reaches, a host synchronisation planted in an update (the stand-in driver's
FAKE_CUDA_PLANT_SYNC) and a kernel whose shared memory goes over the 48 KiB limit (a planted
resource table); the launch-limit rules are checked on their own per architecture.

One full comparison per configuration is what CI pays for (about 25 s each on two shared cores):
the command's run is seed 0 on 2 SMs; the other configuration and the planted bugs run subsets.
"""

import re
import subprocess
import sys

import pytest

from torchtally import _C_cuda, cuda
from torchtally.kernels.cuda.emulation import ARCHES, Launch, Usage, build_driver, build_image, compare, limits


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    return build_driver(tmp_path_factory.mktemp("fake_driver"), _C_cuda.kernel_source())


def image_of(tmp_path_factory, source: str) -> str:
    return build_image(source, tmp_path_factory.mktemp("emulation"), _C_cuda.kernel_names())


def planted(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old  # the planted change must apply exactly once
    return source.replace(old, new)


def test_the_emulate_command_runs_every_kernel_and_finds_no_mismatch():
    done = subprocess.run(
        [sys.executable, "-m", "torchtally.cuda", "emulate"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-4000:]
    rows = dict(re.findall(r"^(tt_\w+) +(\d+ +\d+ +\S+)$", done.stdout, re.MULTILINE))
    assert set(rows) == set(_C_cuda.kernel_names())  # every kernel of kernel_table.h, one line each
    counts = {name: tuple(float(x) for x in row.split()) for name, row in rows.items()}
    # cases, mismatches, host synchronisations per update (deferred checks: none)
    assert {name: c for name, c in counts.items() if c[0] == 0 or c[1] != 0 or c[2] != 0} == {}
    # the counter works: with immediate checks every update that launched waited exactly once
    calls, waited = map(int, re.search(r"immediate checks: (\d+) checked updates, (\d+) host", done.stdout).groups())
    assert calls >= 2 * len({"confmat_labels", "binned_update", "moments_update"}) and waited == calls
    assert re.search(r"^launch limits: sm_75, .*sm_120; registers and static shared memory: NVRTC", done.stdout, re.M)


def test_the_emulate_command_says_when_there_is_no_compiler(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-g++"))
    assert cuda.main(["emulate"]) == 2
    out, err = capsys.readouterr()
    assert "C++ compiler" in err and "no-such-g++" in err and out == ""


def test_a_second_seed_on_a_wider_device_finds_no_mismatch(fake_driver, tmp_path_factory):
    # 16 SMs: larger grids, so fewer elements per thread and more blocks in the shuffled order
    result = compare(image_of(tmp_path_factory, _C_cuda.kernel_source()), fake_driver, seed=1, sms=16, stride=8)
    ran = {name for name, (cases, _) in result.counts.items() if cases}
    assert len(ran) > len(_C_cuda.kernel_names()) // 2 and "tt_latch" in ran
    assert {name: c for name, c in result.counts.items() if c[1]} == {}, "\n".join(result.details[:20])


def test_a_transposed_index_is_found(fake_driver, tmp_path_factory):
    source = planted(
        _C_cuda.kernel_source(),
        "tt_count<SHARED>(sh, a.out, t * a.classes + pred, a.sign);",
        "tt_count<SHARED>(sh, a.out, pred * a.classes + t, a.sign);",
    )
    result = compare(image_of(tmp_path_factory, source), fake_driver, only=["labels C="])
    assert result.counts["tt_confmat_labels_shared"][1] > 0 and result.counts["tt_confmat_labels_global"][1] > 0
    assert any(line.startswith("MISMATCH labels C=") for line in result.details)


def test_a_missing_barrier_is_found_by_the_shuffled_interleaving(fake_driver, tmp_path_factory):
    # without the barrier before the flush, a thread flushes bins other threads still count into
    source = planted(
        _C_cuda.kernel_source(),
        "                                              int64_t sign)\n{\n    __syncthreads();\n",
        "                                              int64_t sign)\n{\n",
    )
    result = compare(image_of(tmp_path_factory, source), fake_driver, only=["labels C="])
    assert result.counts["tt_confmat_labels_shared"][1] > 0
    assert result.counts["tt_confmat_labels_global"][1] == 0  # global atomics: no flush, no race


def test_a_warp_collective_some_lanes_skip_fails_the_launch(fake_driver, tmp_path_factory):
    source = planted(
        _C_cuda.kernel_source(),
        "        nan = __any_sync(TT_FULL_MASK, nan);",
        "        if (lane == 31)\n            return;\n        nan = __any_sync(TT_FULL_MASK, nan);",
    )
    with pytest.raises(RuntimeError, match="CUDA_ERROR_LAUNCH_FAILED|a lane exited"):
        compare(image_of(tmp_path_factory, source), fake_driver, only=["scores C=17 N=70 torch.float32 plain"])


BINNED = "binned T=11 K=3 multiclass=True torch.float32"  # 5 cases: tt_binned_shared_hist_shared_thr


def test_a_host_synchronisation_in_an_update_is_found(fake_driver, tmp_path_factory, monkeypatch):
    monkeypatch.setenv("FAKE_CUDA_PLANT_SYNC", "tt_binned_shared_hist_shared_thr")
    result = compare(image_of(tmp_path_factory, _C_cuda.kernel_source()), fake_driver, only=[BINNED])
    cases, mismatches = result.counts["tt_binned_shared_hist_shared_thr"]
    # its 5 cases in deferred mode, and the first 2 again with immediate checks (more than the one
    # wait); the kernel runs twice per call (the count and its gated undo): 2 syncs per update
    assert cases == 5 and mismatches == 5 + 2 and result.syncs_per_update("tt_binned_shared_hist_shared_thr") == 2
    assert any("host synchronisations in a deferred update" in line for line in result.details)
    assert any("(immediate checks)" in line and "expected 1" in line for line in result.details)


def test_shared_memory_over_the_limit_is_found(fake_driver, tmp_path_factory):
    """A resource table in which the binned kernel holds 48 KiB - 64 B of static shared memory:
    its launches' few hundred dynamic bytes take it over the limit on every architecture."""
    usage = {name: Usage(32, 0) for name in _C_cuda.kernel_names()}
    usage["tt_binned_shared_hist_shared_thr"] = Usage(32, 48 * 1024 - 64)
    planted_table = {a.arch: usage for a in ARCHES}
    image = image_of(tmp_path_factory, _C_cuda.kernel_source())
    result = compare(image, fake_driver, only=[BINNED], resources=planted_table)
    found = [line for line in result.details if line.startswith("MISMATCH launch limit")]
    assert len(found) == len(ARCHES), found
    assert all("tt_binned_shared_hist_shared_thr on sm_" in line and "49152 B per block" in line for line in found)
    assert result.counts["tt_binned_shared_hist_shared_thr"][1] == len(ARCHES)
    assert {n: c for n, c in result.counts.items() if c[1] and n != "tt_binned_shared_hist_shared_thr"} == {}


def test_launch_limit_rules_per_architecture():
    by_arch = {a.arch: a for a in ARCHES}
    table = {a.arch: {"k": Usage(80, 1024)} for a in ARCHES}

    def over(launch):
        return limits.check([launch], table)

    # 80 registers per thread: 2560 per warp, 25 warps = 800 threads from 64K registers
    assert limits.max_threads(80, by_arch[90]) == 800 and limits.max_threads(32, by_arch[90]) == 1024
    assert over(Launch("k", (1, 1, 1), (800, 1, 1), 0, 0)) == []
    too_many = over(Launch("k", (1, 1, 1), (832, 1, 1), 0, 0))
    assert len(too_many) == len(ARCHES) and "over 800, the most 80 registers per thread allow" in too_many[0]
    assert "over 1024 threads per block" in over(Launch("k", (1, 1, 1), (32, 33, 1), 0, 0))[0]
    # 100 KiB of dynamic shared memory: only with the opt-in, and only where the opt-in allows it
    assert len(over(Launch("k", (1, 1, 1), (32, 1, 1), 100 * 1024, 0))) == len(ARCHES)
    opted = over(Launch("k", (1, 1, 1), (32, 1, 1), 100 * 1024, 100 * 1024))
    assert sorted(int(line.split()[2][3:-1]) for line in opted) == [75, 86, 89, 120]
    assert all("opt-in maximum" in line for line in opted)
    # an opt-in below the dynamic size is no opt-in
    assert len(over(Launch("k", (1, 1, 1), (32, 1, 1), 60 * 1024, 50 * 1024))) == len(ARCHES)
