"""The type name a wrong-argument message gives, in all three extensions: the extensions are
built on CPython's limited API, which hides a type's tp_name, so csrc/core/args.h rebuilds it from
__module__ and __name__. It must read as CPython's own messages do: a C type outside builtins with
its module ("numpy.int64", "decimal.Decimal"), a builtin or a class statement's type bare."""

import decimal

import numpy as np
import pytest
import torch

from torchtally import _C, _C_cuda, _nccl


class Local:
    pass


CASES = [
    (1.5, "float"),
    ("s", "str"),
    (b"x", "bytes"),
    (np.int64(1), "numpy.int64"),
    (np.zeros(2), "numpy.ndarray"),
    (decimal.Decimal(1), "decimal.Decimal"),
    (Local(), "Local"),
    (Local, "type"),
    (torch.tensor(1), "Tensor"),
]


@pytest.mark.parametrize("value, name", CASES, ids=[name for _, name in CASES])
def test_a_wrong_argument_is_named_by_its_type(value, name):
    out, labels = torch.zeros(3, 3, dtype=torch.int64), torch.zeros(2, dtype=torch.int64)
    with pytest.raises(TypeError, match=rf"^ignore_index: expected an int, got {name}$"):
        _C.confmat_labels(out, labels, labels, None, value)
    if not isinstance(value, (float, np.ndarray, torch.Tensor)):  # these are floats or tensors
        with pytest.raises(TypeError, match=rf"^threshold: expected a float, got {name}$"):
            _C.confmat_threshold(out, labels, labels, None, None, value)
    if not isinstance(value, str):
        with pytest.raises(TypeError, match=rf"^path: expected a str, got {name}$"):
            _nccl.load(value)
    if not isinstance(value, bytes):
        with pytest.raises(TypeError, match=rf"^image: expected bytes \(a cubin or PTX\), got {name}$"):
            _C_cuda.load_kernels(0, value)
