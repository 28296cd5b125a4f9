"""Metric state follows the input's device: a metric holding no data moves to the device of the
first tensor argument of update; one holding data refuses another device (ValueError naming the
argument and both devices, state unchanged); reset() or .to() lets it move again. Collections
move all their metrics together, so shared states stay one object.

CPU-only torch has a second device, "meta" (tensors without data), which stands in for CUDA
here; the toy metrics below use only torch ops that work on meta tensors. Data cannot be copied
out of meta tensors, so the round trips (meta and back to the CPU) use torch's "lazy" device
(TorchScript on the CPU), which holds data. The same behaviour with real metrics on a GPU is
tests/cuda/test_cuda_device_follow.py.
"""

import pytest
import torch

from torchtally import Metric, MetricCollection

CPU, META = torch.device("cpu"), torch.device("meta")
CPU_REFUSED = (
    r"^x: expected a tensor on meta, where this metric's state is \(it holds data from earlier updates\), "
    r"got one on cpu"
)


class Total(Metric):
    """A sum state and a max state; update(x) or update(scale, x) with a number first."""

    def __init__(self, key=None, **kwargs):
        super().__init__(**kwargs)
        if key is not None:
            self.state_key = key
        self.add_state("total", torch.tensor(0.0), reduce="sum")
        self.add_state("largest", torch.tensor(float("-inf")), reduce="max")

    def update(self, x, scale=1.0):
        if x.dim() != 1 or x.numel() == 0:
            raise ValueError(f"x: expected a non-empty 1-d tensor, got shape {tuple(x.shape)}")
        self.total = self.total + x.sum() * scale
        self.largest = torch.maximum(self.largest, x.max())

    def compute(self):
        return self.total


class ScaledTotal(Total):
    def update(self, scale, x):  # a number comes first: the device is x's
        self.total = self.total + x.sum() * scale


class Rows(Metric):
    """A cat state."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("rows", torch.empty(0, 2), reduce="cat")

    def update(self, x):
        self.append_state("rows", x)

    def compute(self):
        return self.rows


@pytest.fixture
def lazy(lazy_device):
    return lazy_device


def state_devices(metric):
    """Devices of the states, of their defaults and of the metric's `device`."""
    out = {getattr(metric, name).device for name in metric.state_names}
    out |= {default.device for _, default in metric._specs.values()}
    out.add(metric.device)
    return out


# -- one metric ---------------------------------------------------------------------------------


def test_fresh_metric_moves_to_the_input_device():
    m = Total()
    assert state_devices(m) == {CPU}
    m.update(torch.ones(3, device="meta"))
    assert state_devices(m) == {META}
    assert m._updated


def test_a_metric_holding_data_refuses_another_device_and_keeps_its_state():
    m = Total().update(torch.ones(3, device="meta"))
    held = (m.total, m.largest)
    with pytest.raises(ValueError, match=CPU_REFUSED + r"; call reset\(\) or \.to\('cpu'\) first$"):
        m.update(torch.ones(3))
    assert m.total is held[0] and m.largest is held[1]
    assert state_devices(m) == {META} and m._updated


def test_refusal_names_a_keyword_argument_and_the_first_tensor_after_a_number():
    m = Total().update(torch.ones(3))
    with pytest.raises(ValueError, match=r"^x: expected a tensor on cpu, .* got one on meta"):
        m.update(x=torch.ones(3, device="meta"))
    s = ScaledTotal().update(2.0, torch.ones(3))
    with pytest.raises(ValueError, match=r"^x: expected a tensor on cpu, .* got one on meta"):
        s.update(2.0, torch.ones(3, device="meta"))
    assert state_devices(s) == {CPU} and float(s.total) == 6.0


def test_the_device_comes_from_the_first_tensor_argument():
    s = ScaledTotal().update(2.0, torch.ones(3, device="meta"))  # a number first, then the tensor
    assert state_devices(s) == {META}
    k = Total().update(x=torch.ones(3, device="meta"), scale=2.0)  # keyword arguments count too
    assert state_devices(k) == {META}


def test_reset_lets_the_metric_move_again(lazy):
    m = Total().update(torch.tensor([5.0, 6.0], device=lazy))
    assert state_devices(m) == {lazy} and float(m.compute()) == 11.0
    with pytest.raises(ValueError, match=r"^x: expected a tensor on lazy:0, .* got one on cpu"):
        m.update(torch.ones(2))
    m.reset().update(torch.tensor([1.0, 4.0]))
    assert state_devices(m) == {CPU}
    assert float(m.compute()) == 5.0 and float(m.largest) == 4.0
    m.reset().update(torch.tensor([2.0], device=lazy))  # and there again, from the defaults
    assert state_devices(m) == {lazy} and float(m.compute()) == 2.0 and float(m.largest) == 2.0


def test_explicit_to_works_while_holding_data():
    m = Total().update(torch.tensor([1.0, 2.0]))
    m.to("meta")
    assert state_devices(m) == {META}
    m.update(torch.ones(2, device="meta"))  # now the inputs' device matches
    with pytest.raises(ValueError, match=CPU_REFUSED):
        m.update(torch.ones(2))


def test_constructor_device_is_only_the_initial_placement(lazy):
    m = Total(device="lazy")
    assert state_devices(m) == {lazy}
    m.update(torch.tensor([2.0, 3.0]))
    assert state_devices(m) == {CPU} and float(m.compute()) == 5.0 and float(m.largest) == 3.0


def test_a_rejected_first_update_leaves_the_metric_where_it_was():
    m = Total()
    held = (m.total, m.largest, m._specs)
    with pytest.raises(ValueError, match="x: expected a non-empty 1-d tensor"):
        m.update(torch.ones(2, 2, device="meta"))
    assert state_devices(m) == {CPU} and not m._updated
    assert m.total is held[0] and m.largest is held[1] and m._specs is held[2]
    m.update(torch.ones(3, device="meta"))  # still free to move
    assert state_devices(m) == {META}


def test_a_first_update_rejected_after_a_nested_update_still_goes_back():
    class Checked(Total):
        def update(self, x, scale=1.0):
            super().update(x)  # a wrapped update inside the wrapped update: it marks the metric updated
            if scale < 0:
                raise ValueError("scale: expected >= 0")

    m = Checked()
    with pytest.raises(ValueError, match="scale"):
        m.update(torch.ones(3, device="meta"), scale=-1.0)
    assert state_devices(m) == {CPU} and not m._updated and float(m.total) == 0.0
    m.update(torch.ones(3, device="meta"))
    assert state_devices(m) == {META}


def test_loaded_state_counts_as_data():
    m = Total()
    m.load_state_dict({"total": torch.tensor(1.0), "largest": torch.tensor(1.0)})
    with pytest.raises(ValueError, match=r"^x: expected a tensor on cpu"):
        m.update(torch.ones(3, device="meta"))
    assert state_devices(m) == {CPU}


def test_inputs_without_tensors_do_not_move_the_state():
    class Count(Metric):
        def __init__(self):
            super().__init__()
            self.add_state("n", torch.tensor(0), reduce="sum")

        def update(self, k):
            self.n = self.n + k

        def compute(self):
            return self.n

    m = Count().update(3).update(4)
    assert m.n.device == CPU and int(m.compute()) == 7


def test_cat_state_follows_and_refuses(lazy):
    m = Rows()
    m.update(torch.ones(3, 2, device="meta")).update(torch.ones(1, 2, device="meta"))
    assert state_devices(m) == {META} and m.rows.shape == (4, 2)
    with pytest.raises(ValueError, match=r"^x: expected a tensor on meta"):
        m.update(torch.ones(1, 2))
    assert m.rows.shape == (4, 2) and m.rows.device == META
    r = Rows().update(torch.arange(4.0).view(2, 2).to(lazy))
    assert state_devices(r) == {lazy}
    r.reset().update(torch.arange(4.0).view(2, 2))
    assert state_devices(r) == {CPU} and r.compute().tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_cat_rows_move_with_explicit_to():
    m = Rows().update(torch.ones(2, 2)).update(torch.ones(1, 2))
    m.to("meta")
    assert state_devices(m) == {META} and m.rows.shape == (3, 2)


# -- collections --------------------------------------------------------------------------------


def shared_collection():
    """a and b share one state (state_key); c has its own; r has a cat state."""
    return MetricCollection({"a": Total(key="k"), "b": Total(key="k"), "c": Total(), "r": RowsOf1D()})


class RowsOf1D(Metric):
    def __init__(self):
        super().__init__()
        self.add_state("rows", torch.empty(0), reduce="cat")

    def update(self, x, scale=1.0):
        self.append_state("rows", x)

    def compute(self):
        return self.rows


def assert_shared(col):
    a, b = col["a"], col["b"]
    assert a.total is b.total and a.largest is b.largest


def test_collection_moves_together_and_shared_state_stays_one_object():
    col = shared_collection()
    assert_shared(col)
    col.update(torch.ones(3, device="meta"))
    for name in col:
        assert state_devices(col[name]) == {META}, name
    assert_shared(col)
    col.update(torch.ones(2, device="meta"))
    assert_shared(col)


def test_collection_refuses_another_device_once_it_holds_data():
    col = shared_collection().update(torch.ones(3, device="meta"))
    held = {name: col[name].state_values() for name in col}
    with pytest.raises(
        ValueError, match=r"^x: expected a tensor on meta, where the state of this collection's metric '\w+' is"
    ):
        col.update(torch.ones(3))
    for name in col:
        assert state_devices(col[name]) == {META}, name
        assert all(v is h for v, h in zip(col[name].state_values(), held[name])), name
    assert_shared(col)


def test_collection_reset_then_moves_back(lazy):
    col = shared_collection().update(torch.ones(3, device=lazy))
    for name in col:
        assert state_devices(col[name]) == {lazy}, name
    assert_shared(col)
    assert float(col.compute()["a"]) == 3.0
    col.reset()
    col.update(torch.tensor([1.0, 2.0]))
    for name in col:
        assert state_devices(col[name]) == {CPU}, name
    assert_shared(col)
    out = col.compute()
    assert float(out["a"]) == float(out["b"]) == float(out["c"]) == 3.0 and out["r"].tolist() == [1.0, 2.0]


def test_collection_does_not_move_when_one_owner_holds_data_elsewhere():
    col = shared_collection()
    col["c"].update(torch.ones(2))  # c alone holds data, on the CPU
    held = {name: col[name].state_values() for name in col}
    with pytest.raises(
        ValueError, match=r"^x: expected a tensor on cpu, where the state of this collection's metric 'c' is"
    ):
        col.update(torch.ones(3, device="meta"))
    for name in col:  # nobody moved, not even the fresh ones
        assert state_devices(col[name]) == {CPU}, name
        assert all(v is h for v, h in zip(col[name].state_values(), held[name])), name
    assert_shared(col)


def test_collection_batch_rejected_after_the_move_goes_back():
    col = shared_collection()
    held = {name: col[name].state_values() for name in col}
    with pytest.raises(ValueError, match="x: expected a non-empty 1-d tensor"):
        col.update(torch.ones(0, device="meta"))  # the cat metric (updated first) takes it, the Totals refuse
    for name in col:
        assert state_devices(col[name]) == {CPU}, name
        assert all(v is h for v, h in zip(col[name].state_values(), held[name])), name
        assert not col[name]._updated
    assert_shared(col)
    col.update(torch.ones(3, device="meta"))
    assert_shared(col)
    assert {d for name in col for d in state_devices(col[name])} == {META}


def test_collection_to_keeps_sharing_and_moves_every_default():
    col = shared_collection().update(torch.tensor([1.0, 2.0]))
    col.to("meta")
    for name in col:
        assert state_devices(col[name]) == {META}, name
    assert_shared(col)
    col.update(torch.ones(1, device="meta"))
    assert_shared(col)


def test_collection_to_raises_a_pending_rejection_before_anything_moves():
    col = shared_collection().update(torch.tensor([1.0, 2.0]))
    last = col[col._owners[-1]]

    def rejected():  # stands in for a CUDA batch rejected on the device, not yet raised
        raise ValueError("target: label 7 at sample 0 is out of range")

    last.raise_rejected_cuda_updates = rejected
    held = {name: col[name].state_values() for name in col}
    with pytest.raises(ValueError, match="label 7"):
        col.to("meta")
    for name in col:  # the owners before the rejected one did not move either
        assert state_devices(col[name]) == {CPU}, name
        assert all(v is h for v, h in zip(col[name].state_values(), held[name])), name
    assert_shared(col)


def test_metric_docstring_example():
    import doctest

    import torchtally.base.metric

    failed, attempted = doctest.testmod(torchtally.base.metric)
    assert attempted >= 5 and failed == 0
