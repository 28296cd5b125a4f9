"""A wrapper in a MetricCollection is given the keyword arguments its wrapped metric takes:
``update(preds=..., target=..., loss=...)`` reaches ``ClasswiseWrapper(MulticlassF1Score(...))``
without ``loss``, as torchmetrics filters them for its ClasswiseWrapper (``_filter_kwargs``).
torchtally filters for every wrapper; torchmetrics' other wrappers pass ``loss`` on and raise
TypeError, so for them its values come from the same batches without the extra keyword."""

import pytest
import torch

import torchtally

torchmetrics = pytest.importorskip("torchmetrics")


def _batches(seed: int = 0, n: int = 4):
    g = torch.Generator().manual_seed(seed)
    return [
        (
            torch.randn(16, 3, generator=g).softmax(-1),
            torch.randint(0, 3, (16,), generator=g),
            torch.rand(1, generator=g),
        )
        for _ in range(n)
    ]


def _wrapped(lib, name: str):
    c, w = lib.classification, lib.wrappers
    f1 = c.MulticlassF1Score(num_classes=3, average=None)
    acc = c.MulticlassAccuracy(num_classes=3)
    return {
        "classwise": lambda: w.ClasswiseWrapper(f1),
        "minmax": lambda: w.MinMaxMetric(acc),
        "running": lambda: w.Running(acc, window=2),
        "lambda_input": lambda: w.LambdaInputTransformer(acc, transform_pred=lambda p: p),
        "binary_target": lambda: w.BinaryTargetTransformer(c.BinaryAccuracy(), threshold=0),
    }[name]()


def _run(lib, name: str, forward: bool, extra: bool):
    members = {"wrapped": _wrapped(lib, name)}
    if name != "binary_target":  # its preds are one column: no multiclass member beside it
        members["plain"] = lib.classification.MulticlassAccuracy(3)
    collection = lib.MetricCollection(members)
    values = []
    for preds, target, loss in _batches():
        if name == "binary_target":
            preds = preds[:, 0]
        # the input transformers transform positional inputs (as torchmetrics'): preds and target
        # go by position there, the rest by keyword
        positional = (preds, target) if name in ("lambda_input", "binary_target") else ()
        kwargs = {} if positional else {"preds": preds, "target": target}
        kwargs.update({"loss": loss} if extra else {})
        if forward:
            values.append(collection(*positional, **kwargs))
        else:
            collection.update(*positional, **kwargs)
    return values, collection.compute()


def _assert_same(a, b):
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for key in a:
            _assert_same(a[key], b[key])
    elif a is None:
        assert b is None
    else:
        torch.testing.assert_close(torch.as_tensor(a).float(), torch.as_tensor(b).float())


@pytest.mark.parametrize("forward", [False, True], ids=["update", "forward"])
@pytest.mark.parametrize("name", ["classwise", "minmax", "running", "lambda_input", "binary_target"])
def test_a_wrapper_in_a_collection_gets_only_the_keywords_its_metric_takes(name, forward):
    ours = _run(torchtally, name, forward, extra=True)
    theirs = _run(torchmetrics, name, forward, extra=name == "classwise")
    for a, b in zip(ours[0], theirs[0]):
        _assert_same(a, b)
    if not (name == "minmax" and forward):  # torchmetrics' MinMaxMetric keeps only the last forward's batch
        _assert_same(ours[1], theirs[1])


def test_a_wrappers_own_keywords_are_kept():
    boot = torchtally.wrappers.BootStrapper(torchtally.classification.MulticlassAccuracy(3), num_bootstraps=3)
    kwargs = {"sample_index": torch.arange(4), "target": torch.zeros(4), "loss": 1.0}
    assert set(boot.accepted_update_kwargs(kwargs)) == {"sample_index", "target"}


def test_filter_kwargs_as_torchmetrics():
    """``_filter_kwargs``, which code written for torchmetrics calls on a metric, keeps what it
    keeps there."""
    kwargs = {"preds": torch.zeros(2), "target": torch.zeros(2), "loss": 1.0}
    for make in (lambda lib: lib.classification.MulticlassAccuracy(3), lambda lib: lib.regression.MeanSquaredError()):
        assert make(torchtally)._filter_kwargs(**kwargs).keys() == make(torchmetrics)._filter_kwargs(**kwargs).keys()


def _subclass(lib):
    """A ClasswiseWrapper subclass of the kind frameworks write: it filters its keywords through
    the wrapped metric's ``_filter_kwargs`` before updating."""

    class PerClass(lib.wrappers.ClasswiseWrapper):
        def update(self, *args, **kwargs):
            super().update(*args, **self.metric._filter_kwargs(**kwargs))

    return PerClass(lib.classification.MulticlassRecall(num_classes=3, average=None), labels=["a", "b", "c"])


def test_a_classwise_subclass_filtering_through_the_wrapped_metric():
    results = []
    for lib in (torchtally, torchmetrics):
        metric = _subclass(lib)
        for preds, target, loss in _batches(1):
            metric.update(preds=preds, target=target, loss=loss)
        results.append(metric.compute())
    _assert_same(*results)
