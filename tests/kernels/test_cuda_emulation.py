"""The CUDA kernels' own source executed on the host (csrc/cuda/emulation/host_prelude.h),
through torchtally._C_cuda's real enqueue and launch code on the stand-in driver, and compared
bit for bit with the C core (torchtally.kernels.cuda.emulation). `python -m torchtally.cuda
emulate` runs every kernel of kernel_table.h on every case and finds nothing different; a second
seed on a wider device runs every eighth case. Planted bugs in a copy of the source (a
transposed index, a missing barrier) make the comparison fail, and so does a warp collective
that not every lane reaches.

One full comparison per configuration is what CI pays for (about 25 s each on two shared cores):
the command's run is seed 0 on 2 SMs; the other configuration and the planted bugs run subsets.
"""

import re
import subprocess
import sys

import pytest

from torchtally import _C_cuda, cuda
from torchtally.kernels.cuda.emulation import build_driver, build_image, compare


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
    rows = dict(re.findall(r"^(tt_\w+) +(\d+ +\d+)$", done.stdout, re.MULTILINE))
    assert set(rows) == set(_C_cuda.kernel_names())  # every kernel of kernel_table.h, one line each
    counts = {name: tuple(map(int, row.split())) for name, row in rows.items()}
    assert {name: c for name, c in counts.items() if c[0] == 0 or c[1] != 0} == {}


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
