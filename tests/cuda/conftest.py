"""Tests of the CUDA side: csrc/cuda (torchtally._C_cuda), the NCCL loader and the nccl backend.

GPU tests skip, with the reason, where there is no GPU or no CUDA build; the CPU tests here
(NCCL loader error paths, the build switch, routing, the sync transport hook, host-side
validation of torchtally._C_cuda) run everywhere.

This folder is deliberately not a package: as one it would be importable as `cuda`, the name of
NVIDIA's cuda-python package, which CUDA builds of torch may import. So its modules are
top-level (this folder is on sys.path), and tests/ is put on sys.path for the shared C-core
test helpers (csrc._helpers, csrc.test_bad_input).
"""
import os
import sys

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
