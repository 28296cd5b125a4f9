"""Every SIMD path of the C core's confusion-matrix kernels and the torch reference on the same
call (tests/csrc/test_confmat_simd.py, tests/csrc/test_confmat_auto_threshold.py).

torchtally._C picks a path by SIMD level (0 scalar, 1 SSE2, 2 AVX2 where the CPU has it);
``_C._set_simd_level`` (test-only) forces one. ``run_all`` makes the call at every level the
CPU has and on the reference, and asserts they agree: the same increment, or the same error
with ``out`` left as it was.
"""

import contextlib

import torch

from support.kernel_inputs import kernels
from torchtally.kernels import reference as _reference


def levels():
    return list(range(kernels("c")._simd_level()[1] + 1))


@contextlib.contextmanager
def simd_level(level: int):
    c = kernels("c")
    previous = c._set_simd_level(level)
    try:
        yield c
    finally:
        c._set_simd_level(previous)


def run_all(kernel: str, out: torch.Tensor, *args):
    """("ok", increment) or ("error", message) of the scalar path; every level and the reference
    must give the same increment or fail (every level with the same message) leaving out as it was."""
    results = {}
    for level in levels() + ["reference"]:
        state = out.clone()
        impl = _reference if level == "reference" else None
        with simd_level(0 if level == "reference" else level) as c:
            try:
                getattr(impl or c, kernel)(state, *args)
                results[level] = ("ok", state - out)
            except ValueError as exc:
                assert torch.equal(state, out), f"level {level}: state changed by a failed call"
                results[level] = ("error", str(exc))
    first = results[0]
    for level, got in results.items():
        assert got[0] == first[0], (level, got, first)
        if got[0] == "ok":
            assert torch.equal(got[1], first[1]), f"level {level} differs from the scalar path"
        elif level != "reference":  # the reference's texts may differ in wording
            assert got[1] == first[1], (level, got[1], first[1])
    return first
