"""The CUDA kernels' own source executed on the host (csrc/cuda/emulation/host_prelude.h),
through torchtally._C_cuda's real enqueue and launch code on the fake driver, and compared bit
for bit with the C core: every kernel of kernel_table.h runs on the known-answer and random
cases (cuda_emulation.py) and nothing differs. Planted bugs in a copy of the source (a
transposed index, a missing barrier) make the comparison fail, and so does a warp collective
that not every lane reaches."""

import pytest
from cuda_emulation import build_image, compare

from torchtally import _C_cuda


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    from test_cuda_driver import build

    return build(tmp_path_factory)


def image_of(tmp_path_factory, source: str) -> str:
    return build_image(source, tmp_path_factory.mktemp("emulation"), _C_cuda.kernel_names())


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    return image_of(tmp_path_factory, _C_cuda.kernel_source())


def planted(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old  # the planted change must apply exactly once
    return source.replace(old, new)


def problems(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "_details" and (v[0] == 0 or v[1] != 0)}


@pytest.mark.parametrize("seed, sms", [(0, 2), (1, 16)])  # small grids (threads stride), wider ones
def test_every_kernel_runs_and_equals_the_c_core(fake_driver, image, seed, sms):
    result = compare(image, fake_driver, seed=seed, sms=sms)
    assert set(_C_cuda.kernel_names()) <= set(result)
    assert problems(result) == {}, "\n".join(result["_details"][:20])


def test_a_transposed_index_is_found(fake_driver, tmp_path_factory):
    source = planted(
        _C_cuda.kernel_source(),
        "tt_count<SHARED>(sh, a.out, t * a.classes + pred, a.sign);",
        "tt_count<SHARED>(sh, a.out, pred * a.classes + t, a.sign);",
    )
    result = compare(image_of(tmp_path_factory, source), fake_driver, only="labels C=")
    assert result["tt_confmat_labels_shared"][1] > 0 and result["tt_confmat_labels_global"][1] > 0


def test_a_missing_barrier_is_found_by_the_shuffled_interleaving(fake_driver, tmp_path_factory):
    # without the barrier before the flush, a thread flushes bins other threads still count into
    source = planted(
        _C_cuda.kernel_source(),
        "                                              int64_t sign)\n{\n    __syncthreads();\n",
        "                                              int64_t sign)\n{\n",
    )
    result = compare(image_of(tmp_path_factory, source), fake_driver, only="labels C=")
    assert result["tt_confmat_labels_shared"][1] > 0
    assert result["tt_confmat_labels_global"][1] == 0  # global atomics: no flush, no race


def test_a_warp_collective_some_lanes_skip_fails_the_launch(fake_driver, tmp_path_factory):
    source = planted(
        _C_cuda.kernel_source(),
        "        nan = __any_sync(TT_FULL_MASK, nan);",
        "        if (lane == 31)\n            return;\n        nan = __any_sync(TT_FULL_MASK, nan);",
    )
    with pytest.raises(RuntimeError, match="CUDA_ERROR_LAUNCH_FAILED|a lane exited"):
        compare(image_of(tmp_path_factory, source), fake_driver, only="scores C=17 N=70 torch.float32 plain")
