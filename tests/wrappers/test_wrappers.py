"""torchtally.wrappers against torchmetrics.wrappers around the equivalent torchmetrics metrics on
the same data; BootStrapper's Poisson weights and their independence of the batch split; the
life cycle (merge, state_dict, pickle, reset) through the shared tester; bad inputs, each leaving
every wrapped copy's state as it was. The distributed checks: tests/distributed/test_wrappers_sync.py."""

import functools
import math
import warnings

import pytest
import torch
import torchmetrics
import torchmetrics.wrappers as tmw
from support.metric_tester import MetricCase, assert_rejects, check_metric

import torchtally.wrappers as W
from torchtally import Metric, MetricCollection
from torchtally.aggregation import CatMetric, MeanMetric, SumMetric
from torchtally.classification import BinaryAccuracy, MulticlassAccuracy, MulticlassRecall
from torchtally.regression import MeanAbsoluteError, MeanSquaredError, R2Score
from torchtally.wrappers.poisson import poisson_weights

TM = torchmetrics
TMC = torchmetrics.classification
G = torch.Generator().manual_seed(3)
PREDS = torch.randint(0, 3, (40,), generator=G)
TARGET = torch.randint(0, 3, (40,), generator=G)
X = torch.randn(40, 2, generator=G)
Y = X + 0.5 * torch.randn(40, 2, generator=G)
BATCHES = [(PREDS[i : i + 8], TARGET[i : i + 8]) for i in range(0, 40, 8)]
REG_BATCHES = [(X[i : i + 8], Y[i : i + 8]) for i in range(0, 40, 8)]


def close(actual, expected, what=""):
    if isinstance(expected, dict):
        assert set(actual) == set(expected), (what, set(actual), set(expected))
        for k in expected:
            close(actual[k], expected[k], f"{what}[{k}]")
    else:
        torch.testing.assert_close(torch.as_tensor(actual), torch.as_tensor(expected), rtol=1e-5, atol=1e-6, msg=what)


def run_both(ours, theirs, batches, forward=False):
    for batch in batches:
        if forward:
            close(ours(*batch), theirs(*batch), "forward")
        else:
            ours.update(*batch)
            theirs.update(*batch)
    close(ours.compute(), theirs.compute(), "compute")


# -- parity with torchmetrics ---------------------------------------------------------------


@pytest.mark.parametrize("forward", [False, True])
@pytest.mark.parametrize("kwargs", [{}, {"labels": ["a", "b", "c"]}, {"prefix": "acc-"}, {"postfix": "-acc"}])
def test_classwise_matches_torchmetrics(kwargs, forward):
    ours = W.ClasswiseWrapper(MulticlassAccuracy(3, average=None), **kwargs)
    theirs = tmw.ClasswiseWrapper(TM.classification.MulticlassAccuracy(3, average=None), **kwargs)
    run_both(ours, theirs, BATCHES, forward)
    assert ours.num_classes == 3 and ours.higher_is_better is True


def test_classwise_in_a_collection_shares_the_confusion_matrix():
    coll = MetricCollection(
        {
            "acc": W.ClasswiseWrapper(MulticlassAccuracy(3, average=None), prefix="acc_"),
            "rec": W.ClasswiseWrapper(MulticlassRecall(3, average=None), prefix="rec_"),
        }
    )
    theirs = TM.MetricCollection(
        {
            "acc": tmw.ClasswiseWrapper(TM.classification.MulticlassAccuracy(3, average=None), prefix="acc_"),
            "rec": tmw.ClasswiseWrapper(TM.classification.MulticlassRecall(3, average=None), prefix="rec_"),
        }
    )
    run_both(coll, theirs, BATCHES)
    assert coll.compute_groups == {0: ["acc", "rec"]}  # one state for both


@pytest.mark.parametrize("forward", [False, True])
def test_minmax_matches_torchmetrics(forward):
    ours, theirs = W.MinMaxMetric(BinaryAccuracy()), tmw.MinMaxMetric(TM.classification.BinaryAccuracy())
    p = torch.rand(40, generator=G)
    t = (torch.rand(40, generator=G) > 0.5).long()
    for lo in range(0, 40, 10):
        batch = (p[lo : lo + 10], t[lo : lo + 10])
        if forward:  # batch values (torchmetrics' compute after forward sees only the last batch)
            close(ours(*batch), theirs(*batch), "forward")
        else:
            ours.update(*batch)
            theirs.update(*batch)
            close(ours.compute(), theirs.compute(), "compute")
    ours.reset()
    theirs.reset()
    ours.update(p[:5], t[:5])
    theirs.update(p[:5], t[:5])
    close(ours.compute(), theirs.compute(), "after reset: the extremes are kept")


def test_minmax_refuses_a_non_scalar_result():
    metric = W.MinMaxMetric(MulticlassAccuracy(3, average=None))
    metric.update(PREDS, TARGET)
    with pytest.raises(RuntimeError, match="scalar"):
        metric.compute()


@pytest.mark.parametrize("forward", [False, True])
@pytest.mark.parametrize(
    "make, make_tm, kwargs",
    [
        (R2Score, lambda: TM.regression.R2Score(), {}),
        (MeanAbsoluteError, lambda: TM.regression.MeanAbsoluteError(), {"remove_nans": True}),
    ],
)
def test_multioutput_matches_torchmetrics(make, make_tm, kwargs, forward):
    x, y = X.clone(), Y.clone()
    x[3, 1] = float("nan")
    y[17, 0] = float("nan")
    batches = [(x[i : i + 10], y[i : i + 10]) for i in range(0, 40, 10)]
    ours = W.MultioutputWrapper(make(), num_outputs=2, **kwargs)
    theirs = tmw.MultioutputWrapper(make_tm(), num_outputs=2, **kwargs)
    run_both(ours, theirs, batches, forward)


@pytest.mark.parametrize("output_dim, squeeze_outputs", [(-1, True), (1, False), (0, True), (0, False)])
def test_multioutput_without_nans_matches_torchmetrics(output_dim, squeeze_outputs):
    """A batch without NaN passes each output's column on as a view (no NaN search per output):
    the same values as torchmetrics' selected copies, along any output_dim, squeezed or not."""
    x, y = (X.T.contiguous(), Y.T.contiguous()) if output_dim == 0 else (X, Y)
    cut = (lambda t, i: t[:, i : i + 10]) if output_dim == 0 else (lambda t, i: t[i : i + 10])
    kwargs = {"output_dim": output_dim, "squeeze_outputs": squeeze_outputs}
    ours = W.MultioutputWrapper(MeanAbsoluteError(), num_outputs=2, **kwargs)
    theirs = tmw.MultioutputWrapper(TM.regression.MeanAbsoluteError(), num_outputs=2, **kwargs)
    run_both(ours, theirs, [(cut(x, i), cut(y, i)) for i in range(0, 40, 10)], False)


def test_multioutput_outputs_kept_whole_do_not_follow_the_callers_buffer():
    """A wrapped metric that keeps its inputs (CatMetric) gets views of the caller's columns: it
    stores copies, so a caller refilling its buffer leaves the stored values alone."""
    buffer = X[:5].clone()
    metric = W.MultioutputWrapper(CatMetric(), num_outputs=2).update(buffer)
    buffer.fill_(0.0)
    torch.testing.assert_close(metric.compute(), X[:5].T, rtol=0, atol=0)


@pytest.mark.parametrize("forward", [False, True])
def test_multitask_matches_torchmetrics(forward):
    ours = W.MultitaskWrapper(
        {"cls": MetricCollection([MulticlassAccuracy(3), MulticlassRecall(3)]), "reg": MeanSquaredError()},
        prefix="val_",
    )
    theirs = tmw.MultitaskWrapper(
        {
            "cls": TM.MetricCollection(
                [TM.classification.MulticlassAccuracy(3), TM.classification.MulticlassRecall(3)]
            ),
            "reg": TM.regression.MeanSquaredError(),
        },
        prefix="val_",
    )
    for i in range(0, 40, 10):
        preds = {"cls": PREDS[i : i + 10], "reg": X[i : i + 10, 0]}
        target = {"cls": TARGET[i : i + 10], "reg": Y[i : i + 10, 0]}
        if forward:
            close(ours(preds, target), theirs(preds, target), "forward")
        else:
            ours.update(preds, target)
            theirs.update(preds, target)
    close(ours.compute(), theirs.compute(), "compute")
    assert list(ours.keys()) == list(theirs.keys())
    assert list(ours.keys(flatten=False)) == list(theirs.keys(flatten=False))
    assert list(ours.clone(prefix="test_").compute()) == ["test_cls", "test_reg"]


@pytest.mark.parametrize(
    "make, make_tm",
    [
        (SumMetric, lambda: TM.aggregation.SumMetric()),
        (MeanMetric, lambda: TM.aggregation.MeanMetric()),
        (functools.partial(MulticlassAccuracy, 3), lambda: TM.classification.MulticlassAccuracy(3)),
    ],
)
def test_running_matches_torchmetrics(make, make_tm):
    ours, theirs = W.Running(make(), window=3), tmw.Running(make_tm(), window=3)
    for i, batch in enumerate(BATCHES):
        batch = batch if make is not SumMetric and make is not MeanMetric else (batch[0].float(),)
        if i % 2:
            close(ours(*batch), theirs(*batch), "forward: the batch's value")
        else:
            ours.update(*batch)
            theirs.update(*batch)
        close(ours.compute(), theirs.compute(), f"compute over the window after batch {i}")


def test_running_in_a_collection_forward():
    coll = MetricCollection({"sum": W.Running(SumMetric(), 2), "mean": W.Running(MeanMetric(), 2)})
    theirs = TM.MetricCollection(
        {"sum": tmw.Running(TM.aggregation.SumMetric(), 2), "mean": tmw.Running(TM.aggregation.MeanMetric(), 2)}
    )
    for v in range(5):
        close(coll(torch.tensor(float(v))), theirs(torch.tensor(float(v))), "forward")
        close(coll.compute(), theirs.compute(), "compute")


@pytest.mark.parametrize("collection", [False, True])
def test_tracker_matches_torchmetrics(collection):
    if collection:
        ours = W.MetricTracker(MetricCollection([MulticlassAccuracy(3), MeanSquaredError()]), maximize=[True, False])
        theirs = tmw.MetricTracker(
            TM.MetricCollection([TM.classification.MulticlassAccuracy(3), TM.regression.MeanSquaredError()]),
            maximize=[True, False],
        )
    else:
        ours, theirs = (
            W.MetricTracker(MulticlassAccuracy(3)),
            tmw.MetricTracker(TM.classification.MulticlassAccuracy(3)),
        )
    with pytest.raises(ValueError, match="increment"):
        ours.update(PREDS, TARGET)
    for step in range(4):
        ours.increment()
        theirs.increment()
        for batch in BATCHES[step:]:
            ours.update(*batch)
            theirs.update(*batch)
        close(ours.compute(), theirs.compute(), "compute")
    assert ours.n_steps == theirs.n_steps == 4
    close(ours.compute_all(), theirs.compute_all(), "compute_all")
    assert ours.best_metric(return_step=True) == theirs.best_metric(return_step=True)


@pytest.mark.parametrize("threshold", [0, 0.5])
def test_input_transformers_match_torchmetrics(threshold):
    target = torch.rand(40, generator=G)
    preds = torch.rand(40, generator=G)
    ours = W.BinaryTargetTransformer(MetricCollection([BinaryAccuracy(), MeanSquaredError()]), threshold=threshold)
    theirs = tmw.BinaryTargetTransformer(
        TM.MetricCollection([TM.classification.BinaryAccuracy(), TM.regression.MeanSquaredError()]), threshold=threshold
    )
    run_both(ours, theirs, [(preds[i : i + 10], target[i : i + 10]) for i in range(0, 40, 10)], forward=True)
    lam = W.LambdaInputTransformer(MeanAbsoluteError(), transform_pred=lambda p: 2 * p, transform_target=torch.sqrt)
    lam_tm = tmw.LambdaInputTransformer(
        TM.regression.MeanAbsoluteError(), transform_pred=lambda p: 2 * p, transform_target=torch.sqrt
    )
    run_both(lam, lam_tm, [(preds[i : i + 10], target[i : i + 10]) for i in range(0, 40, 10)])


class FeatureSum(Metric):
    feature_network = "net"

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.add_state("total", torch.zeros((), dtype=torch.float64), reduce="sum")

    def update(self, x):
        self.total = self.total + self.net(x).double().sum()

    def compute(self):
        return self.total


class CountingNet(torch.nn.Linear):
    def __init__(self, calls):
        super().__init__(2, 1)
        self.calls = calls

    def forward(self, x):
        self.calls.append(1)
        return super().forward(x)


def test_feature_share_runs_the_network_once_per_batch():
    calls = []
    net = CountingNet(calls)
    shared = W.FeatureShare({"a": FeatureSum(net), "b": FeatureSum(torch.nn.Linear(2, 1))})
    assert shared["b"].net is shared["a"].net
    with torch.no_grad():
        for x in X.split(10):
            shared.update(x)
    assert len(calls) == 4  # once per batch, not once per metric
    expected = torch.nn.functional.linear(X, net.weight, net.bias).double().sum()
    close(shared.compute(), {"a": expected, "b": expected})
    with pytest.raises(AttributeError, match="feature_network"):
        W.FeatureShare([MeanSquaredError()])


# -- BootStrapper -------------------------------------------------------------------------


def test_poisson_weights_have_the_poisson_1_distribution():
    w = poisson_weights(0, 0, torch.arange(200_000), 2).double()
    assert abs(w.mean() - 1) < 0.01 and abs(w.var() - 1) < 0.015
    assert abs((w == 0).double().mean() - math.exp(-1)) < 0.005
    assert abs((w == 2).double().mean() - math.exp(-1) / 2) < 0.005
    assert abs(torch.corrcoef(w)[0, 1]) < 0.01  # copies independent
    assert not torch.equal(poisson_weights(1, 0, torch.arange(100), 1), poisson_weights(0, 0, torch.arange(100), 1))


def test_bootstrap_copies_are_the_metric_on_the_resampled_data():
    boot = W.BootStrapper(MulticlassAccuracy(3), num_bootstraps=5, raw=True, seed=11)
    for lo in range(0, 40, 8):
        boot.update(PREDS[lo : lo + 8], TARGET[lo : lo + 8], sample_index=torch.arange(lo, lo + 8) + 100)
    weights = poisson_weights(11, 0, torch.arange(40) + 100, 5)
    for b in range(5):
        rows = torch.arange(40).repeat_interleave(weights[b])
        expected = TM.classification.MulticlassAccuracy(3)(PREDS[rows], TARGET[rows])
        close(boot.compute()["raw"][b], expected, f"copy {b}")


def test_bootstrap_does_not_depend_on_the_batch_split_given_sample_indices():
    results = []
    for size in (1, 7, 40):
        boot = W.BootStrapper(MeanSquaredError(), num_bootstraps=8, quantile=0.9, raw=True)
        order = torch.randperm(40, generator=torch.Generator().manual_seed(size))  # any order too
        for lo in range(0, 40, size):
            i = order[lo : lo + size]
            boot.update(X[i, 0], Y[i, 0], sample_index=i)
        results.append(boot.compute())
    for r in results[1:]:
        close(r, results[0], "another batch split")


def test_bootstrap_output_keys_and_shapes_as_torchmetrics():
    kwargs = dict(num_bootstraps=4, mean=True, std=True, quantile=torch.tensor([0.1, 0.9]), raw=True)
    ours = W.BootStrapper(MulticlassAccuracy(3, average=None), **kwargs)
    theirs = tmw.BootStrapper(TM.classification.MulticlassAccuracy(3, average=None), **kwargs)
    for batch in BATCHES:
        ours.update(*batch)
        theirs.update(*batch)
    a, b = ours.compute(), theirs.compute()
    assert {k: v.shape for k, v in a.items()} == {k: v.shape for k, v in b.items()}
    assert {k: v.dtype for k, v in a.items()} == {k: v.dtype for k, v in b.items()}


def test_bootstrap_forward_resamples_once_and_accumulates():
    boot = W.BootStrapper(MulticlassAccuracy(3), num_bootstraps=6, raw=True)
    fresh = W.BootStrapper(MulticlassAccuracy(3), num_bootstraps=6, raw=True)
    at = [torch.arange(len(BATCHES[0][0])), len(BATCHES[0][0]) + torch.arange(len(BATCHES[1][0]))]
    first = boot(*BATCHES[0], sample_index=at[0])
    fresh.update(*BATCHES[0], sample_index=at[0])
    close(first, fresh.compute(), "forward's value: the batch's resampling")
    boot(*BATCHES[1], sample_index=at[1])
    fresh.update(*BATCHES[1], sample_index=at[1])
    close(boot.compute(), fresh.compute(), "forward accumulates as update does")


def test_bootstrap_without_sample_index_merges_and_resumes_without_reusing_weights():
    # two shards counted apart (positions 0..4 each): merged, their copies must not move together
    a = W.BootStrapper(MeanMetric(), num_bootstraps=8, raw=True)
    b = W.BootStrapper(MeanMetric(), num_bootstraps=8, raw=True)
    a.update(torch.ones(5))
    b.update(torch.full((5,), 1000.0))
    a.merge_state(b)
    raw = a.compute()["raw"]
    assert not torch.allclose(raw / raw[0], torch.ones_like(raw)), raw  # not every copy the same mix
    # a checkpoint resumes the running position: the next samples get new weights
    c = W.BootStrapper(SumMetric(), num_bootstraps=8, raw=True)
    c.update(torch.ones(5))
    c.persistent(True)
    resumed = W.BootStrapper(SumMetric(), num_bootstraps=8, raw=True)
    resumed.persistent(True)
    resumed.load_state_dict(c.state_dict())
    assert int(resumed.next_position) == 5


def test_running_resumes_its_window_from_a_checkpoint():
    metric = W.Running(SumMetric(), window=3)
    for v in (1.0, 2.0, 3.0, 4.0):
        metric.update(torch.tensor(v))
    metric.persistent(True)
    resumed = W.Running(SumMetric(), window=3)
    resumed.persistent(True)
    resumed.load_state_dict(metric.state_dict())
    metric.update(torch.tensor(5.0))
    resumed.update(torch.tensor(5.0))
    assert float(resumed.compute()) == float(metric.compute()) == 12.0  # 3 + 4 + 5: the oldest place went


def test_bootstrap_multinomial_warns_and_refuses_sample_index():
    with pytest.warns(UserWarning, match="batch split"):
        boot = W.BootStrapper(MulticlassAccuracy(3), sampling_strategy="multinomial")
    boot.update(PREDS, TARGET)
    assert set(boot.compute()) == {"mean", "std"}
    with pytest.raises(ValueError, match="sample_index"):
        boot.update(PREDS, TARGET, sample_index=torch.arange(40))


# -- life cycle through the shared tester ------------------------------------------------------

CASES = [
    MetricCase(
        "classwise",
        functools.partial(W.ClasswiseWrapper, MulticlassAccuracy(3, average=None)),
        BATCHES,
        reference=lambda p, t: tmw.ClasswiseWrapper(TM.classification.MulticlassAccuracy(3, average=None))(p, t),
    ),
    MetricCase(
        "multioutput-r2",
        functools.partial(W.MultioutputWrapper, R2Score(), 2),
        REG_BATCHES,
        reference=lambda x, y: tmw.MultioutputWrapper(TM.regression.R2Score(), 2)(x, y),
        rtol=1e-5,
        atol=1e-6,
    ),
    MetricCase(
        "bootstrap",
        functools.partial(W.BootStrapper, MeanSquaredError(), 5),
        [(x[:, 0], y[:, 0]) for x, y in REG_BATCHES],
        reference=None,
    ),
    MetricCase(
        "binary-target",
        functools.partial(W.BinaryTargetTransformer, MeanAbsoluteError(), 0.2),
        [(x[:, 0], y[:, 0]) for x, y in REG_BATCHES],
        reference=lambda p, t: TM.regression.MeanAbsoluteError()(p, (t > 0.2).float()),
        rtol=1e-6,
    ),
]


@pytest.mark.parametrize("case", [c for c in CASES if c.name != "bootstrap"], ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


def test_bootstrap_state_dict_and_merge():
    a, b = CASES[2].factory(), CASES[2].factory()
    a.persistent(True)
    for x, y in REG_BATCHES:
        a.update(x[:, 0], y[:, 0], sample_index=torch.arange(8))
    b.load_state_dict(a.state_dict())
    close(b.compute(), a.compute(), "load_state_dict")
    c = CASES[2].factory()
    c.merge_state([a, b])
    assert torch.equal(c.metric_state["b0_0_error_sum"], 2 * a.metric_state["b0_0_error_sum"])


# -- bad inputs ------------------------------------------------------------------------------


def test_bad_inputs_leave_every_copy_unchanged():
    boot = W.BootStrapper(MeanSquaredError(), 4)
    boot.update(X[:5, 0], Y[:5, 0])
    assert_rejects(boot, (X[:5, 0], Y[:4, 0]), ValueError, "same length")
    with pytest.raises(ValueError, match="sample_index: expected shape"):
        boot.update(X[:5, 0], Y[:5, 0], sample_index=torch.arange(4))
    with pytest.raises(TypeError, match="sample_index: expected an integer"):
        boot.update(X[:5, 0], Y[:5, 0], sample_index=torch.arange(5.0))
    with pytest.raises(ValueError, match=">= 0"):
        boot.update(X[:5, 0], Y[:5, 0], sample_index=-torch.arange(1, 6))
    bad = Y[:5, 0].clone()
    bad[2] = float("nan")  # refused by MSE: no copy keeps the batch
    assert_rejects(boot, (X[:5, 0], bad), ValueError, "")

    multi = W.MultioutputWrapper(MeanSquaredError(), 2, remove_nans=False)
    multi.update(X[:5], Y[:5])
    bad = Y[:5].clone()
    bad[1, 1] = float("nan")  # output 0 accepts, output 1 refuses: output 0 must not keep it
    assert_rejects(multi, (X[:5], bad), ValueError, "")
    assert_rejects(multi, (X[:5, :1], Y[:5, :1]), ValueError, "expected 2 outputs")

    tasks = W.MultitaskWrapper({"a": MeanSquaredError(), "b": MeanSquaredError()})
    tasks.update({"a": X[:, 0], "b": X[:, 1]}, {"a": Y[:, 0], "b": Y[:, 1]})
    assert_rejects(tasks, ({"a": X[:, 0]}, {"a": Y[:, 0]}), ValueError, "same keys")
    assert_rejects(tasks, ({"a": X[:, 0], "b": X[:, 1]}, {"a": Y[:, 0], "b": bad[:, 1]}), ValueError, "")


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: W.BootStrapper(torch.nn.Linear(1, 1)), ValueError, "base_metric"),
        (lambda: W.BootStrapper(MeanSquaredError(), 0), ValueError, "num_bootstraps"),
        (lambda: W.BootStrapper(MeanSquaredError(), sampling_strategy="x"), ValueError, "sampling_strategy"),
        (lambda: W.ClasswiseWrapper(MulticlassAccuracy(3), labels="abc"), ValueError, "labels"),
        (lambda: W.ClasswiseWrapper(MulticlassAccuracy(3), prefix=1), ValueError, "prefix"),
        (lambda: W.MultitaskWrapper([MeanSquaredError()]), TypeError, "dict"),
        (lambda: W.MultitaskWrapper({"a": 1}), TypeError, "task_metrics"),
        (lambda: W.Running(MeanSquaredError(), 0), ValueError, "window"),
        (lambda: W.Running(object()), ValueError, "metric"),
        (lambda: W.BinaryTargetTransformer(MeanSquaredError(), "0"), TypeError, "threshold"),
        (lambda: W.LambdaInputTransformer(MeanSquaredError(), transform_pred=1), TypeError, "transform_pred"),
        (lambda: W.MetricInputTransformer(1), TypeError, "wrapped_metric"),
        (lambda: W.MetricTracker(1), TypeError, "Metric"),
        (lambda: W.MetricTracker(MeanSquaredError(), maximize=[True]), ValueError, "single bool"),
        (lambda: W.MultioutputWrapper(MeanSquaredError(), 0), ValueError, "num_outputs"),
        # torchmetrics' own messages read too (in parentheses after torchtally's)
        (lambda: W.BootStrapper([]), ValueError, "Expected base metric to be an instance of torchmetrics.Metric but"),
        (
            lambda: W.ClasswiseWrapper([]),
            ValueError,
            "Expected argument `metric` to be an instance of `torchmetrics.Metric` but",
        ),
        (lambda: W.MinMaxMetric([]), ValueError, "Expected base metric to be an instance .*"),
        (lambda: W.Running(1), ValueError, "Expected argument `metric` to be an instance of `torchmetrics.Metric` .*"),
        (lambda: W.MetricInputTransformer([]), TypeError, "Expected wrapped metric to be an instance of .*"),
        # the threshold is checked before the wrapped metric, as torchmetrics does
        (lambda: W.BinaryTargetTransformer(object(), "a"), TypeError, "Expected `threshold` to be of type .*"),
        (
            lambda: W.MultitaskWrapper({"a": MeanSquaredError()}).clone(prefix=1),
            ValueError,
            "Expected input `prefix` to be a string",
        ),
        (
            lambda: W.MultitaskWrapper({"a": MeanSquaredError()}).clone(postfix=1),
            ValueError,
            "`postfix`.*Expected input `postfix`",
        ),
    ],
)
def test_bad_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make()


# -- torch.jit.script, the wrapped metrics' update counts, plots -------------------------------


class _FeatureSum(Metric):
    feature_network = "net"

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.add_state("total", torch.zeros((), dtype=torch.float64), reduce="sum")

    def update(self, x):
        self.total = self.total + self.net(x).sum()

    def compute(self):
        return self.total


@pytest.mark.parametrize(
    "make",
    [
        lambda: W.BootStrapper(MeanSquaredError(), num_bootstraps=3),
        lambda: W.ClasswiseWrapper(MulticlassAccuracy(3, average=None)),
        lambda: W.MinMaxMetric(BinaryAccuracy()),
        lambda: W.MultioutputWrapper(R2Score(), 2),
        lambda: W.MultitaskWrapper({"a": BinaryAccuracy(), "b": MeanSquaredError()}),
        lambda: W.Running(SumMetric(), window=3),
        lambda: W.MetricInputTransformer(BinaryAccuracy()),
        lambda: W.LambdaInputTransformer(BinaryAccuracy(), transform_pred=lambda p: p),
        lambda: W.BinaryTargetTransformer(MetricCollection([BinaryAccuracy()]), threshold=0.5),
        lambda: W.FeatureShare({"a": _FeatureSum(torch.nn.Linear(2, 1))}),
        lambda: W.MetricTracker(BinaryAccuracy()),
    ],
)
def test_every_wrapper_can_be_scripted(make):
    """torch.jit.script(wrapper) works (docs/using.md promises it as for torchmetrics' metrics)."""
    wrapper = make()
    if isinstance(wrapper, W.MetricTracker):
        wrapper.increment()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.script(wrapper)


def test_a_wrapped_metric_counts_the_updates_run_through_the_wrapper():
    """update_count read on the wrapped metric, as torchmetrics' wrappers leave it: one per update
    or forward (also where the wrapper updates twice), 0 after the wrapper's reset."""
    lam = W.LambdaInputTransformer(MeanSquaredError(), transform_pred=lambda p: p)
    lam.update(X[:4, 0], Y[:4, 0])
    assert lam.wrapped_metric.update_count == 1
    lam(X[4:8, 0], Y[4:8, 0])
    assert lam.wrapped_metric.update_count == 2 and lam.wrapped_metric.update_called
    lam.reset()
    assert lam.wrapped_metric.update_count == 0 and not lam.wrapped_metric.update_called

    running = W.Running(SumMetric(), window=2)  # its forward updates twice
    for i in range(3):
        running(torch.tensor(float(i)))
    assert running.base_metric.update_count == 3

    multi = W.MultioutputWrapper(MeanSquaredError(), 2)
    multi.update(X[:4], Y[:4])
    assert [m.update_count for m in multi.metrics] == [1, 1]

    tasks = W.MultitaskWrapper({"a": MeanSquaredError(), "b": MeanSquaredError()})
    tasks.update({"a": X[:4, 0], "b": X[:4, 1]}, {"a": Y[:4, 0], "b": Y[:4, 1]})
    bad = {"a": X[:4, 0], "b": X[:3, 1]}  # task b refuses it after task a ran
    with pytest.raises(ValueError):
        tasks.update(bad, {"a": Y[:4, 0], "b": Y[:4, 1]})
    with pytest.raises(ValueError):
        tasks(bad, {"a": Y[:4, 0], "b": Y[:4, 1]})
    assert [m.update_count for m in tasks.task_metrics.values()] == [1, 1]


def test_multitask_and_tracker_plot():
    plt = pytest.importorskip("matplotlib.pyplot")
    tasks = W.MultitaskWrapper({"a": BinaryAccuracy(), "b": MeanSquaredError()}, prefix="p_")
    preds, target = {"a": PREDS[:8] % 2, "b": X[:8, 0]}, {"a": TARGET[:8] % 2, "b": Y[:8, 0]}
    assert len(tasks.plot(tasks(preds, target))) == 2
    steps = [tasks(preds, target) for _ in range(3)]
    (_, ax_a), (_, ax_b) = tasks.plot(steps)
    assert len(ax_a.lines[0].get_xdata()) == 3 and len(ax_b.lines[0].get_xdata()) == 3
    with pytest.raises(ValueError, match="number of tasks"):
        tasks.plot(axes=[ax_a])
    plt.close("all")

    tracker = W.MetricTracker(MulticlassAccuracy(3))
    for preds, target in BATCHES[:3]:
        tracker.increment()
        tracker.update(preds, target)
    fig, ax = tracker.plot()
    assert isinstance(fig, plt.Figure) and ax.lines[0].get_ydata().tolist() == pytest.approx(
        tracker.compute_all().tolist()
    )
    plt.close("all")


def test_classwise_with_a_prefix_in_a_prefixed_collection():
    """The names compose as torchmetrics': the collection's prefix, then the wrapper's. (Float
    labels of the target's shape are refused, where torchmetrics truncates them: the scores here.)"""
    metrics = MetricCollection(
        {
            "accuracy": MulticlassAccuracy(num_classes=2),
            "f1": W.ClasswiseWrapper(MulticlassRecall(num_classes=2, average="none"), ["Tree", "Bush"], prefix="r_"),
        },
        prefix="val/",
    )
    out = metrics(torch.rand(5, 2, 3, 3, generator=G), torch.randint(0, 2, (5, 3, 3), generator=G))
    assert set(out) == {"val/accuracy", "val/r_Tree", "val/r_Bush"}
