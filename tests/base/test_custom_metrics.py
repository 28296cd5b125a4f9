"""A metric written for torchmetrics runs on torchtally with only its import changed: the
examples of torchmetrics' "Implementing a Metric" page (tests/support/implement_examples.py),
list states, the squeezing of compute's results, the class attributes, and the helpers of
torchtally.utilities. torchmetrics itself, on the same data in the same process, is the oracle
of every value here (tests/distributed/test_custom_metric_sync.py: the same on gloo ranks)."""

import copy
import dataclasses
import io
import pickle
from collections import OrderedDict, namedtuple
from typing import Any, Dict, List

import pytest
import torch
from support.implement_examples import examples

import torchtally
import torchtally.utilities as tt_utils
from torchtally.utilities import data as tt_data
from torchtally.utilities import distributed as tt_distributed

torchmetrics = pytest.importorskip("torchmetrics")
from torchmetrics.utilities import data as tm_data  # noqa: E402
from torchmetrics.utilities import distributed as tm_distributed  # noqa: E402

LIBRARIES = {"torchtally": torchtally.Metric, "torchmetrics": torchmetrics.Metric}


def batches(n_batches: int = 4, seed: int = 0) -> List[tuple]:
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(5 + i, generator=g), torch.randn(5 + i, generator=g)) for i in range(n_batches)]


def labels(n_batches: int = 4, seed: int = 1) -> List[tuple]:
    g = torch.Generator().manual_seed(seed)
    return [
        (torch.randint(0, 3, (6 + i,), generator=g), torch.randint(0, 3, (6 + i,), generator=g))
        for i in range(n_batches)
    ]


def run_both(make: Any, data: List[tuple], forward: bool = True) -> Dict[str, Any]:
    """Per library: the batch values of forward (or None), and compute at the end."""
    out = {}
    for library in ("torchtally", "torchmetrics"):
        metric = make(library)
        steps = [metric(*b) for b in data] if forward else [metric.update(*b) for b in data]
        out[library] = (steps if forward else None, metric.compute(), metric)
    return out


def assert_same(a: Any, b: Any) -> None:
    if isinstance(b, torch.Tensor):
        assert isinstance(a, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype, (a, b)
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)
    elif isinstance(b, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(b, dict):
        assert type(a) is type(b) and list(a) == list(b), (a, b)
        for k in b:
            assert_same(a[k], b[k])
    else:
        assert a == b


# -- the docs' examples ------------------------------------------------------------------


def test_the_examples_are_built_from_one_text_with_the_import_changed():
    tt, tm = examples("torchtally"), examples("torchmetrics")
    for name in ("MyAccuracy", "MySpearmanCorrCoef", "MyAttributesMetric", "MyPlotMetric"):
        assert issubclass(tt[name], torchtally.Metric) and torchmetrics.Metric not in tt[name].__mro__
        assert issubclass(tm[name], torchmetrics.Metric)
    assert tt["dim_zero_cat"] is tt_utils.dim_zero_cat
    assert tt["_AX_TYPE"].__module__ == "typing"  # torchtally's (Any: no matplotlib import)


def test_my_accuracy_equals_torchmetrics():
    out = run_both(lambda lib: examples(lib)["ScaffoldedAccuracy"](), labels())
    assert_same(out["torchtally"][0], out["torchmetrics"][0])
    assert_same(out["torchtally"][1], out["torchmetrics"][1])
    with pytest.raises(ValueError, match="same shape"):
        examples("torchtally")["ScaffoldedAccuracy"]().update(torch.zeros(3), torch.zeros(4))


def test_my_spearman_with_list_states_equals_torchmetrics():
    out = run_both(lambda lib: examples(lib)["MySpearmanCorrCoef"](), batches())
    assert_same(out["torchtally"][0], out["torchmetrics"][0])
    assert_same(out["torchtally"][1], out["torchmetrics"][1])
    tt_metric, tm_metric = out["torchtally"][2], out["torchmetrics"][2]
    assert type(tt_metric.preds) is list and len(tt_metric.preds) == len(tm_metric.preds) == 4
    assert_same(tt_metric.preds, tm_metric.preds)


def test_my_metric_class_attributes_as_in_torchmetrics():
    for name in ("higher_is_better", "is_differentiable", "full_state_update"):
        for lib in ("torchtally", "torchmetrics"):
            assert getattr(examples(lib)["MyAttributesMetric"], name) == getattr(
                examples("torchmetrics")["MyAttributesMetric"], name
            )


def test_my_plot_metric_draws_through_plot_as_torchmetrics():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    drawn = {}
    for lib in ("torchtally", "torchmetrics"):
        metric = examples(lib)["PlotScaffold"]()
        values = [metric(torch.tensor([float(i), 2.0 * i])) for i in range(3)]
        fig, ax = metric.plot()
        fig_steps, ax_steps = metric.plot(values)
        assert isinstance(fig, matplotlib.figure.Figure) and isinstance(ax, matplotlib.axes.Axes)
        drawn[lib] = [list(line.get_ydata()) for line in ax_steps.get_lines()]
        plt.close("all")
    assert drawn["torchtally"] == drawn["torchmetrics"]


# -- list states -------------------------------------------------------------------------


class TallyCollect(torchtally.Metric):
    """A list state ``values`` with the given ``dist_reduce_fx``; compute: the rows' sum."""

    def __init__(self, reduce: Any = "cat", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("values", default=[], dist_reduce_fx=reduce)

    def update(self, x: torch.Tensor) -> None:
        self.values.append(x)

    def compute(self) -> torch.Tensor:
        return tt_utils.dim_zero_cat(self.values).sum(0)


class MetricsCollect(torchmetrics.Metric):
    """TallyCollect, written for torchmetrics."""

    def __init__(self, reduce: Any = "cat", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("values", default=[], dist_reduce_fx=reduce)

    def update(self, x: torch.Tensor) -> None:
        self.values.append(x)

    def compute(self) -> torch.Tensor:
        return torchmetrics.utilities.dim_zero_cat(self.values).sum(0)


COLLECT = {"torchtally": TallyCollect, "torchmetrics": MetricsCollect}


def list_metric(library: str, reduce: Any = "cat", full_state_update: Any = None, **kwargs: Any) -> Any:
    if full_state_update is None:
        return COLLECT[library](reduce, **kwargs)
    cls = type("Collect", (COLLECT[library],), {"full_state_update": full_state_update})
    return cls(reduce, **kwargs)


@pytest.mark.parametrize("full_state_update", [True, None, False])
@pytest.mark.parametrize("reduce", ["cat", None])
def test_list_state_forward_and_compute_as_torchmetrics(full_state_update, reduce):
    data = [(torch.randn(3, 2),), (torch.randn(1, 2),), (torch.randn(4, 2),)]
    out = run_both(lambda lib: list_metric(lib, reduce, full_state_update), data)
    assert_same(out["torchtally"][0], out["torchmetrics"][0])
    assert_same(out["torchtally"][1], out["torchmetrics"][1])
    assert_same(out["torchtally"][2].values, out["torchmetrics"][2].values)


def test_list_state_holds_the_appended_tensors_and_reset_gives_a_new_empty_list():
    metric = list_metric("torchtally")
    assert metric.values == []
    x = torch.randn(2)
    metric.update(x)
    held = metric.values
    assert type(held) is list and held[0] is x  # what update appended, as in torchmetrics
    metric.reset()
    assert metric.values == [] and metric.values is not held and held == [x]
    assert metric.metric_state == {"values": []}


def test_list_state_state_dict_as_torchmetrics():
    data = [torch.randn(2, 3), torch.randn(1, 3)]
    saved = {}
    for lib in ("torchtally", "torchmetrics"):
        metric = list_metric(lib)
        for x in data:
            metric.update(x)
        assert "values" not in metric.state_dict()  # not persistent by default, as in torchmetrics
        metric.persistent(True)
        saved[lib] = metric.state_dict()
        assert saved[lib]["values"] is not metric.values and saved[lib]["values"][0] is not metric.values[0]
    assert_same(saved["torchtally"]["values"], saved["torchmetrics"]["values"])
    loaded = list_metric("torchtally")
    loaded.load_state_dict(saved["torchmetrics"])  # torchmetrics' state dict loads into torchtally
    assert_same(loaded.values, data)
    assert_same(loaded.compute(), torch.cat(data).sum(0))
    with pytest.raises(TypeError, match="list of tensors"):
        list_metric("torchtally").load_state_dict({"values": torch.zeros(3)})


def test_list_state_survives_pickle_deepcopy_and_clone():
    metric = list_metric("torchtally")
    metric.update(torch.arange(3.0))
    metric.update(torch.arange(2.0))
    for other in (pickle.loads(pickle.dumps(metric)), copy.deepcopy(metric), metric.clone()):
        assert_same(other.values, metric.values)
        assert other.values is not metric.values
        other.update(torch.ones(1))
        assert len(metric.values) == 2
        assert_same(other.compute(), torch.tensor(5.0))
    buffer = io.BytesIO()
    torch.save(metric, buffer)
    buffer.seek(0)
    assert_same(torch.load(buffer, weights_only=False).values, metric.values)


def test_list_state_merge_state_as_torchmetrics():
    merged = {}
    for lib in ("torchtally", "torchmetrics"):
        cls = type("Collect", (COLLECT[lib],), {"full_state_update": False})
        a, b = cls(), cls()
        a.update(torch.ones(2))
        b.update(torch.arange(3.0))
        a.merge_state(b)
        merged[lib] = (a.values, a.compute())
    assert_same(merged["torchtally"], merged["torchmetrics"])


def test_list_state_declarations_as_torchmetrics():
    metric = list_metric("torchtally")
    with pytest.raises(ValueError, match="empty list"):
        metric.add_state("other", default=[torch.zeros(1)])
    with pytest.raises(ValueError, match="dist_reduce_fx"):
        metric.add_state("other", default=[], dist_reduce_fx="median")
    for reduce in ("sum", "mean", "max", "min", None, torch.stack):
        metric.add_state(f"s_{id(reduce)}", default=[], dist_reduce_fx=reduce)
    assert metric.state_reduce("values") == "list"


def test_a_list_state_costs_one_merge_slot_in_the_plan():
    metric = list_metric("torchtally")
    (spec,) = metric.state_specs()
    assert spec.reduce == "merge" and spec.dtype == torch.int64 and spec.shape == () and "[list, cat]" in spec.label
    values, error = metric.sync_values()
    assert error is None and values[0].dtype == torch.int64 and values[0].dim() == 1


def test_list_state_blob_round_trip_keeps_every_item_exactly():
    items = [
        torch.randn(3, 2),
        torch.tensor(7),
        torch.arange(5, dtype=torch.int16),
        torch.tensor([True, False, True]),
        torch.randn(2, dtype=torch.complex128),
        torch.randn(4, 1, dtype=torch.bfloat16),
        torch.empty(0, 3),
    ]
    metric = list_metric("torchtally", reduce=None)
    metric.values.extend(items)
    (blob,), _ = metric.sync_values()
    per_rank = [blob, blob.clone()]
    gathered = metric.merge_synced_values("values", per_rank)
    assert len(gathered) == 2 * len(items)
    for k, item in enumerate(items):  # round by round: item k of rank 0, then of rank 1
        for got in gathered[2 * k : 2 * k + 2]:
            assert got.dtype == item.dtype and got.shape == item.shape and torch.equal(got, item)


def test_a_cat_list_whose_items_cannot_be_concatenated_is_refused_at_sync():
    metric = list_metric("torchtally")
    metric.values.extend([torch.zeros(3), torch.zeros(2, 2)])
    values, error = metric.sync_values()
    assert isinstance(error, ValueError) and "cannot be concatenated" in str(error)
    synced = metric.merge_synced_values("values", values)  # this rank sent no items instead
    assert synced.shape == (0,) and synced.dtype == metric.dtype


def test_cat_rows_of_other_dtypes_on_two_ranks_raise_naming_both():
    a, b = list_metric("torchtally"), list_metric("torchtally")
    a.update(torch.zeros(2, 3))
    b.update(torch.zeros(2, 3, dtype=torch.float64))
    blobs = [a.sync_values()[0][0], b.sync_values()[0][0]]
    with pytest.raises(ValueError, match="rank 0 holds torch.float32 .* rank 1 torch.float64"):
        a.merge_synced_values("values", blobs)


def test_wrappers_refuse_a_list_state_with_a_clear_error():
    from torchtally.wrappers import BootStrapper

    with pytest.raises(TypeError, match="do not host list states"):
        BootStrapper(examples("torchtally")["MySpearmanCorrCoef"]())


# -- squeezing, as torchmetrics' compute ---------------------------------------------------


def shaped_metric(library: str, make: Any, squeeze: Any = None) -> Any:
    class Shaped(LIBRARIES[library]):  # type: ignore[misc, valid-type]
        full_state_update = False
        if squeeze is not None:
            squeeze_results = squeeze

        def __init__(self) -> None:
            super().__init__()
            self.add_state("total", default=torch.tensor(0.0), dist_reduce_fx="sum")

        def update(self, x: torch.Tensor) -> None:
            self.total += x.sum()

        def compute(self) -> Any:
            return make(self.total)

    return Shaped()


Pair = namedtuple("Pair", "a b")
RESULTS = {
    "one-element": lambda t: t.reshape(1, 1),
    "two elements": lambda t: torch.stack([t, t]),
    "dict": lambda t: {"a": t.reshape(1), "b": [t.reshape(1, 1, 1), (t.reshape(1), t.expand(2))]},
    "ordered dict": lambda t: OrderedDict(x=t.reshape(1)),
    "namedtuple": lambda t: Pair(t.reshape(1), t.reshape(1, 1)),
    "number": lambda t: float(t),
}


@pytest.mark.parametrize("kind", sorted(RESULTS))
def test_results_are_squeezed_as_torchmetrics_squeezes_them(kind):
    out = run_both(lambda lib: shaped_metric(lib, RESULTS[kind]), [(torch.ones(2),), (torch.ones(3),)])
    assert_same(out["torchtally"][0], out["torchmetrics"][0])  # forward's batch values too
    assert_same(out["torchtally"][1], out["torchmetrics"][1])


def test_squeeze_results_false_keeps_the_shape():
    metric = shaped_metric("torchtally", RESULTS["one-element"], squeeze=False)
    assert metric(torch.ones(2)).shape == (1, 1)
    assert metric.compute().shape == (1, 1)


def test_torchtallys_own_computes_are_not_wrapped_again():
    from torchtally.aggregation import SumMetric

    class Sub(SumMetric):  # no compute of its own: torchtally's compute, as it is
        pass

    assert Sub.compute is SumMetric.compute
    assert "squeeze" not in SumMetric.compute.__code__.co_names


# -- torchmetrics' class attributes ------------------------------------------------------


@pytest.mark.parametrize("full_state_update", [True, None, False])
def test_full_state_update_decides_the_updates_of_forward_as_in_torchmetrics(full_state_update):
    calls = {}
    for lib in ("torchtally", "torchmetrics"):
        counter = []

        class Counting(LIBRARIES[lib]):  # type: ignore[misc, valid-type]
            def __init__(self) -> None:
                super().__init__()
                self.add_state("n", default=torch.tensor(0), dist_reduce_fx="sum")

            def update(self, x: torch.Tensor) -> None:
                counter.append(1)
                self.n += x.numel()

            def compute(self) -> torch.Tensor:
                return self.n

        Counting.full_state_update = full_state_update
        metric = Counting()
        values = [metric(torch.ones(k)) for k in (2, 3)]
        calls[lib] = (len(counter), values, metric.compute())
    assert calls["torchtally"][0] == calls["torchmetrics"][0] == (2 if full_state_update is False else 4)
    assert_same(calls["torchtally"][1:], calls["torchmetrics"][1:])


@pytest.mark.parametrize(
    "name",
    [
        "full_state_update",
        "higher_is_better",
        "is_differentiable",
        "plot_lower_bound",
        "plot_upper_bound",
        "plot_legend_name",
    ],
)
def test_class_attributes_are_constants_of_an_instance_as_in_torchmetrics(name):
    for lib in ("torchtally", "torchmetrics"):
        metric = examples(lib)["PlotScaffold"]()
        with pytest.raises(RuntimeError, match=f"Can't change const `{name}`"):
            setattr(metric, name, 1)


def test_plot_bounds_and_legend_reach_the_figure():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    class Bounded(examples("torchtally")["PlotScaffold"]):
        plot_lower_bound, plot_upper_bound, plot_legend_name = -1.0, 3.0, "output"

    metric = Bounded()
    metric.update(torch.ones(2))
    _, ax = metric.plot()
    assert ax.get_ylim() == (-1.0, 3.0)
    _, ax = metric.plot(torch.tensor([0.5, 1.5]))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["output 0", "output 1"]
    plt.close("all")


# -- torchtally.utilities ----------------------------------------------------------------


def test_the_faces_under_torchmetrics_module_names():
    import torchtally.collections
    import torchtally.metric
    import torchtally.utilities.plot

    assert torchtally.metric.Metric is torchtally.Metric
    assert torchtally.collections.MetricCollection is torchtally.MetricCollection
    assert set(torchmetrics.utilities.__all__) <= set(tt_utils.__all__)
    assert {"_AX_TYPE", "_PLOT_OUT_TYPE"} <= set(vars(torchtally.utilities.plot))


@pytest.mark.parametrize("name", ["dim_zero_cat", "dim_zero_sum", "dim_zero_mean", "dim_zero_max", "dim_zero_min"])
def test_dim_zero_helpers_equal_torchmetrics(name):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(4, 3, generator=g)
    assert_same(getattr(tt_data, name)(x), getattr(tm_data, name)(x))
    if name == "dim_zero_cat":
        items = [torch.randn(2, generator=g), torch.tensor(1.5), torch.randn(3, generator=g)]
        assert_same(tt_data.dim_zero_cat(items), tm_data.dim_zero_cat(items))
        for module in (tt_data, tm_data):
            with pytest.raises(ValueError, match="No samples to concatenate"):
                module.dim_zero_cat([])


def test_label_helpers_equal_torchmetrics():
    g = torch.Generator().manual_seed(4)
    target = torch.randint(0, 5, (6, 2), generator=g)
    probs = torch.rand(6, 5, 2, generator=g)
    assert_same(tt_data.to_onehot(target), tm_data.to_onehot(target))
    assert_same(tt_data.to_onehot(target, 7), tm_data.to_onehot(target, 7))
    for k in (1, 3):
        assert_same(tt_data.select_topk(probs, k), tm_data.select_topk(probs, k))
        half = probs.half()  # topk by argsort: no half topk on the CPU
        assert_same(tt_data.select_topk(half, k), tm_data.select_topk(half, k))
    assert_same(tt_data.to_categorical(probs), tm_data.to_categorical(probs))


def test_apply_to_collection_equals_lightning_utilities():
    from lightning_utilities import apply_to_collection as reference

    @dataclasses.dataclass
    class Box:
        x: torch.Tensor
        label: str = "box"

    @dataclasses.dataclass(frozen=True)
    class Frozen:
        x: torch.Tensor

    data = {
        "a": torch.ones(1),
        "b": [torch.zeros(2), "text", None, (torch.ones(1, 1), 3)],
        "c": Pair(torch.ones(1), torch.nn.Parameter(torch.ones(2))),
        "d": OrderedDict(e=torch.ones(1)),
    }
    for function in (lambda t: t * 2, lambda t: None if t.numel() == 1 else t):
        for kwargs in ({}, {"include_none": False}, {"wrong_dtype": torch.nn.Parameter}):
            for value in (data, [data], torch.ones(3)):
                try:
                    theirs = reference(value, torch.Tensor, function, **kwargs)
                except TypeError:  # a named tuple that lost an item
                    with pytest.raises(TypeError):
                        tt_data.apply_to_collection(value, torch.Tensor, function, **kwargs)
                    continue
                assert_same(tt_data.apply_to_collection(value, torch.Tensor, function, **kwargs), theirs)
    box = Box(torch.ones(2))
    assert_same(
        tt_data.apply_to_collection(box, torch.Tensor, lambda t: t + 1).x,
        reference(box, torch.Tensor, lambda t: t + 1).x,
    )
    assert box.x.sum() == 2
    for allow_frozen in (False, True):
        try:
            theirs = reference(Frozen(torch.ones(1)), torch.Tensor, lambda t: t + 1, allow_frozen=allow_frozen)
        except ValueError:
            with pytest.raises(ValueError):
                tt_data.apply_to_collection(Frozen(torch.ones(1)), torch.Tensor, lambda t: t + 1)
            continue
        ours = tt_data.apply_to_collection(Frozen(torch.ones(1)), torch.Tensor, lambda t: t + 1, allow_frozen=True)
        assert_same(ours.x, theirs.x)


def test_reductions_equal_torchmetrics():
    g = torch.Generator().manual_seed(5)
    num, denom, weights = torch.randint(0, 5, (4,), generator=g).float(), torch.tensor([3.0, 0, 4, 5]), torch.rand(4)
    for reduction in ("micro", "macro", "weighted", "none", None):
        assert_same(
            tt_distributed.class_reduce(num, denom, weights, reduction),
            tm_distributed.class_reduce(num, denom, weights, reduction),
        )
    for reduction in ("elementwise_mean", "sum", "none", None):
        assert_same(tt_distributed.reduce(num, reduction), tm_distributed.reduce(num, reduction))
    with pytest.raises(ValueError):
        tt_distributed.reduce(num, "median")


def test_check_forward_full_state_property_recommends_as_torchmetrics(capsys):
    from torchmetrics.utilities import check_forward_full_state_property as reference

    for library, check in (("torchtally", tt_utils.check_forward_full_state_property), ("torchmetrics", reference)):
        cls = type(examples(library)["ScaffoldedAccuracy"])
        check(
            examples(library)["ScaffoldedAccuracy"],
            input_args={"preds": torch.tensor([0, 1, 1]), "target": torch.tensor([0, 1, 0])},
            num_update_to_compare=[2, 3],
            reps=2,
        )
        lines = capsys.readouterr().out.splitlines()
        assert lines[-1].startswith("Recommended setting `full_state_update="), (cls, lines)


def test_rank_zero_messages_on_one_process(caplog):
    with pytest.warns(UserWarning, match="careful"):
        tt_utils.rank_zero_warn("careful")
    with caplog.at_level("DEBUG", logger="torchtally"):
        tt_utils.rank_zero_info("info line")
        tt_utils.rank_zero_debug("debug line")
    assert "info line" in caplog.text and "debug line" in caplog.text
