"""A metric's states compared before and after something that must not change them: a refused
update, load or merge, or a reused input buffer (tests/catalogue/test_atomic_updates.py,
tests/catalogue/test_fuzz.py, tests/base/test_state_dict.py). The states are the copies
``support.metric_tester.states_of`` takes."""

import torch


def assert_same_states(before, after, what):
    assert before.keys() == after.keys(), what
    for name in before:
        a, b = before[name], after[name]
        assert a.dtype == b.dtype and a.shape == b.shape and a.device == b.device, f"{what}: state {name!r} changed"
        assert torch.equal(a.double().nan_to_num(), b.double().nan_to_num()), f"{what}: state {name!r} changed"
