"""R2 and explained variance from a residual/target moments state: a one-output CPU state is
finished in Python floats, every other state by tensor ops; both give the same bits (a
two-output state holding the one-output state's rows twice is finished by the tensor path)."""

import math

import pytest
import torch

from torchtally.functional.regression import compute
from torchtally.functional.regression import update as reg_update

_F64 = torch.float64


def _state(preds, target):
    p, t = torch.tensor(preds, dtype=_F64)[:, None], torch.tensor(target, dtype=_F64)[:, None]
    return reg_update.residual_moments_update(reg_update.empty_moments(0), p, t)


def _twice(state):
    """The state of two identical outputs: rows (res, res, tgt, tgt)."""
    return torch.stack((state[0], state[0], state[1], state[1]))


CASES = [
    ([2.5, 0.0, 2.0, 8.0], [3.0, -0.5, 2.0, 7.0]),  # the usual case
    ([1.0, 2.0, 3.0], [2.0, 3.0, 4.0]),  # a constant residual: 1 (explained variance)
    ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]),  # perfect: 1
    ([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]),  # a constant target: 0
    ([3.0, 3.0], [5.0, 5.0]),  # both constant
    ([1e6 + 0.5, 1e6 - 0.25, 1e6], [1e6 + 0.25, 1e6, 1e6 + 1]),  # a large offset
]


@pytest.mark.parametrize("multioutput", ["raw_values", "uniform_average", "variance_weighted"])
@pytest.mark.parametrize("preds, target", CASES)
def test_one_output_equals_the_tensor_path(preds, target, multioutput):
    state = _state(preds, target)
    for finish in (compute.explained_variance_from_moments, compute.r2_from_moments):
        one = finish(state, multioutput)
        both = finish(_twice(state), multioutput)
        want = both[:1] if multioutput == "raw_values" else both
        assert one.dtype == _F64 and one.shape == want.shape
        assert (math.isnan(float(one)) and math.isnan(float(want))) or float(one) == float(want), finish


@pytest.mark.parametrize("adjusted", [1, 2])
def test_adjusted_r2_equals_the_tensor_path(adjusted):
    state = _state([2.5, 0.0, 2.0, 8.0, 4.0], [3.0, -0.5, 2.0, 7.0, 4.5])
    one = compute.r2_from_moments(state, "uniform_average", adjusted)
    assert float(one) == float(compute.r2_from_moments(_twice(state), "uniform_average", adjusted))


def test_a_state_without_samples_takes_the_tensor_path():
    state = reg_update.empty_moments(2)  # one output, no sample: 0 / 0
    assert math.isnan(float(compute.explained_variance_from_moments(state)))
