"""GPU tests: csrc/cuda (torchtally._C_cuda) on a device, metrics following CUDA inputs, and the
nccl backend. Each skips, with the reason, where there is no GPU; the tests of
the same code that need no GPU are elsewhere: tests/kernels (routing, _C_cuda's host checks),
tests/nccl (the NCCL loader through a fake NCCL), tests/test_setup.py (the build switch) and
tests/distributed/test_sync_transport.py (the transport hook the nccl backend plugs into).
check_build.py is `make cuda-compile`'s check of the built module.

This folder is deliberately not a package: as one it would be importable as `cuda`, the name of
NVIDIA's cuda-python package, which CUDA builds of torch may import. So its modules are
top-level (this folder is on sys.path), and tests/ is put on sys.path for the shared C-core
test helpers (support.kernel_inputs, support.kernel_bad_inputs).
"""

import os
import sys

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
