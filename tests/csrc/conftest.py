"""Fixtures of the C-core tests: every differential and bad-input test runs on both paths."""

import pytest
from support.kernel_inputs import IMPLS, kernels


@pytest.fixture(params=IMPLS)
def impl(request):
    """The kernel module under test: torchtally._C ("c") or the torch reference ("reference")."""
    return kernels(request.param)


@pytest.fixture
def c_core():
    """torchtally._C itself (fails, never skips, when the extension is not built)."""
    return kernels("c")
