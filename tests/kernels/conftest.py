"""Tests of the kernel layer that need no GPU: routing of CUDA tensors in torchtally.kernels, and
the host side of torchtally._C_cuda (argument checks) through stand-in "CUDA" tensors.

Not a package (its modules are top-level, as in tests/cuda); tests/ is put on sys.path for the
shared C-core test helpers (support.kernel_inputs, support.kernel_bad_inputs). The GPU tests are
tests/cuda.
"""

import os
import sys

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
