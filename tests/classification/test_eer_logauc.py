"""The curve readouts (EER, LogAUC, PrecisionAtFixedRecall, RecallAtFixedPrecision,
SensitivityAtSpecificity, SpecificityAtSensitivity) against torchmetrics 1.9 and scikit-learn:
classes (in batches), functional and task forms, exact and binned mode, ties, a column without
positives, the life cycle and one 3-rank gloo run, state sharing with AUROC / ROC in a
collection, the torchmetrics surface, and bad options and batches (state unchanged)."""

import functools
import importlib
import inspect
import warnings

import numpy as np
import pytest
import torch
import torchmetrics.classification as tmc
import torchmetrics.functional.classification as tmf
from sklearn import metrics as skm
from support.metric_tester import MetricCase, assert_rejects, check_metric, run_distributed_cases

import torchtally.classification as ttc
import torchtally.functional as ttf
from torchtally import MetricCollection

NUM = 3
SIZES = [37, 64, 5, 80, 23, 51, 40]  # uneven batches, 300 samples
THRESHOLDS = {
    "exact": None,
    "int": 11,
    "list": [0.0, 0.05, 0.1, 0.3, 0.3, 0.5, 0.52, 0.8, 1.0],  # a repeated edge: an empty bin between
    "tensor64": torch.linspace(0, 1, 7, dtype=torch.float64),
}
# family: (class suffix, functional suffix, the option and the values the grid tries)
FAMILIES = {
    "EER": ("EER", "eer", None, [None]),
    "LogAUC": ("LogAUC", "logauc", "fpr_range", [(0.001, 0.1), (0.05, 0.8)]),
    "PAFR": ("PrecisionAtFixedRecall", "precision_at_fixed_recall", "min_recall", [0.0, 0.5, 0.9]),
    "RAFP": ("RecallAtFixedPrecision", "recall_at_fixed_precision", "min_precision", [0.0, 0.5, 0.9]),
    "SAS": ("SensitivityAtSpecificity", "sensitivity_at_specificity", "min_specificity", [0.0, 0.5, 0.95]),
    "SPAS": ("SpecificityAtSensitivity", "specificity_at_sensitivity", "min_sensitivity", [0.0, 0.5, 0.95]),
}

g = torch.Generator().manual_seed(7)
_bt = torch.randint(0, 2, (300,), generator=g)
_bp = ((torch.rand(300, generator=g) * 0.7 + 0.3 * _bt) * 20).round() / 20  # ties
_bt_ign = torch.where(torch.rand(300, generator=g) < 0.1, -1, _bt)
_ct = torch.randint(0, NUM, (300,), generator=g)
_cp = ((torch.rand(300, NUM, generator=g) + torch.nn.functional.one_hot(_ct, NUM)) * 8).round().softmax(1)
_ct_nopos = torch.where(_ct == 2, 0, _ct)  # class 2 never occurs
_lt = torch.randint(0, 2, (300, NUM), generator=g)
_lp = ((torch.rand(300, NUM, generator=g) + 0.4 * _lt) * 12).round() / 17
_lt_nopos = _lt.clone()
_lt_nopos[:, 1] = 0  # label 1 has no positive
_lt_ign = torch.where(torch.rand(300, NUM, generator=g) < 0.1, -1, _lt)

DATA = {
    "binary": (_bp, _bt),
    "binary-ignore": (_bp, _bt_ign),
    "binary-nopos": (_bp, torch.zeros_like(_bt)),
    "multiclass": (_cp, _ct),
    "multiclass-nopos": (_cp, _ct_nopos),
    "multilabel": (_lp, _lt),
    "multilabel-nopos": (_lp, _lt_nopos),
    "multilabel-ignore": (_lp, _lt_ign),
}


def _batches(preds, target):
    out, lo = [], 0
    for n in SIZES:
        out.append((preds[lo : lo + n], target[lo : lo + n]))
        lo += n
    return out


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def assert_same(ours, theirs, where=""):
    """Same structure, dtypes, shapes and values (NaN where NaN)."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, tuple) and len(ours) == len(theirs), f"{where}: {ours!r} vs {theirs!r}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{where}[{i}]")
        return
    assert ours.dtype == theirs.dtype, f"{where}: dtype {ours.dtype} != {theirs.dtype}"
    assert ours.shape == theirs.shape, f"{where}: shape {tuple(ours.shape)} != {tuple(theirs.shape)}"
    torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=1e-7, equal_nan=True, msg=lambda m: f"{where}: {m}")


def _args(task, family, value, average=None):
    """(positional args after preds/target, keyword args) for the functional form and the class."""
    _, _, option, _ = FAMILIES[family]
    num = () if task == "binary" else (NUM,)
    kw = {} if option is None else {option: value}
    if average is not None or (family == "LogAUC" and task != "binary"):  # class default None, functional "macro"
        kw["average"] = average
    return num, kw


def _grid():
    cases = []
    for family, (_, _, _, values) in FAMILIES.items():
        for data in DATA:
            task = data.split("-")[0]
            averages = [None]
            if family == "EER" and task == "multiclass":
                averages = [None, "micro", "macro"]
            elif family == "LogAUC" and task != "binary":
                averages = [None, "macro"]
            for t_name in THRESHOLDS:
                for i, value in enumerate(values):
                    average = averages[i % len(averages)] if t_name != "exact" else averages[-1 - i % len(averages)]
                    cases.append((family, data, t_name, value, average))
    return cases


GRID = _grid()


def _grid_id(case):
    family, data, t_name, value, average = case
    return f"{family}-{data}-{t_name}-{value}" + (f"-{average}" if average else "")


def _stable_interp(x, xp, fp):
    """torchmetrics' LogAUC interpolation with the points kept in the curve's order: the ROC
    curve's FPR is already sorted, and torchmetrics' unstable argsort reorders tied FPRs (a
    documented difference: its value at a vertical stretch depends on torch's sort)."""
    slope = (fp[1:] - fp[:-1]) / (xp[1:] - xp[:-1])
    k = (torch.searchsorted(xp, x) - 1).clamp(0, len(slope) - 1)
    return fp[k] + slope[k] * (x - xp[k])


@pytest.fixture(autouse=True)
def _torchmetrics_logauc_in_curve_order(monkeypatch):
    # the module (the package's attribute of that name is the function)
    monkeypatch.setattr(
        importlib.import_module("torchmetrics.functional.classification.logauc"), "interp", _stable_interp
    )


def _expected_torchmetrics(family, data, t_name, value, average):
    """torchmetrics' result, or None where torchmetrics fails (documented difference)."""
    task = data.split("-")[0]
    preds, target = DATA[data]
    num, kw = _args(task, family, value, average)
    fn = getattr(tmf, f"{task}_{FAMILIES[family][1]}")
    ignore = -1 if "ignore" in data else None
    try:
        return _quiet(fn, preds, target, *num, thresholds=THRESHOLDS[t_name], ignore_index=ignore, **kw)
    except IndexError:
        return None


@pytest.mark.parametrize("case", GRID, ids=_grid_id)
def test_class_and_functional_equal_torchmetrics(case):
    family, data, t_name, value, average = case
    task = data.split("-")[0]
    preds, target = DATA[data]
    num, kw = _args(task, family, value, average)
    ignore = -1 if "ignore" in data else None
    theirs = _expected_torchmetrics(*case)
    cls = getattr(ttc, task.capitalize() + FAMILIES[family][0])
    metric = cls(*num, thresholds=THRESHOLDS[t_name], ignore_index=ignore, **kw)
    for batch in _batches(preds, target):
        metric.update(*batch)
    ours_class = _quiet(metric.compute)
    fn = getattr(ttf, f"{task}_{FAMILIES[family][1]}")
    ours_fn = _quiet(fn, preds, target, *num, thresholds=THRESHOLDS[t_name], ignore_index=ignore, **kw)
    assert_same(ours_class, ours_fn, "class vs functional")
    if theirs is None:  # torchmetrics: IndexError (recall at precision 0 where recall is NaN: no positive)
        assert family == "RAFP" and value == 0.0 and "nopos" in data
        values, thresholds = ours_class
        column = {"binary": (), "multiclass": (2,), "multilabel": (1,)}[task]
        assert values[column] == 0 and torch.isnan(thresholds[column])
        return
    assert_same(ours_class, theirs, _grid_id(case))


def test_the_grid_covers_every_readout_mode_and_a_column_without_positives():
    seen = {(f, d.split("-")[0], t) for f, d, t, _, _ in GRID}
    assert len(seen) == len(FAMILIES) * 3 * len(THRESHOLDS)
    assert any("nopos" in d for _, d, _, _, _ in GRID)


# -- ties and which threshold: small hand-made cases ------------------------------------------


@pytest.mark.parametrize("thresholds", [None, 5, [0.0, 0.2, 0.2, 0.6, 0.6, 1.0]])
@pytest.mark.parametrize("value", [0.0, 0.25, 0.5, 0.75, 1.0])
def test_ties_pick_torchmetrics_threshold(thresholds, value):
    """Tied scores across classes and plateaus of the curves: the same (value, threshold)."""
    preds = torch.tensor([0.2, 0.2, 0.6, 0.6, 0.6, 0.9, 0.9, 0.4])
    target = torch.tensor([0, 1, 0, 1, 1, 1, 0, 0])
    for family in ("PAFR", "RAFP", "SAS", "SPAS"):
        name = FAMILIES[family][1]
        kw = {FAMILIES[family][2]: value}
        ours = getattr(ttf, f"binary_{name}")(preds, target, thresholds=thresholds, **kw)
        theirs = getattr(tmf, f"binary_{name}")(preds, target, thresholds=thresholds, **kw)
        assert_same(ours, theirs, f"{name} {value} {thresholds}")
    assert_same(ttf.binary_eer(preds, target, thresholds), tmf.binary_eer(preds, target, thresholds))


def test_exact_values_equal_scikit_learn():
    """EER and sensitivity at specificity from scikit-learn's full ROC curve (float32 scores)."""
    preds, target = _bp, _bt
    fpr, tpr, _ = skm.roc_curve(target.numpy(), preds.double().numpy(), drop_intermediate=False)
    i = np.argmin(np.abs(fpr - (1 - tpr)))
    assert ttf.binary_eer(preds, target).item() == pytest.approx((fpr[i] + 1 - tpr[i]) / 2, abs=1e-6)
    for min_spec in (0.5, 0.8, 0.95):
        want = tpr[(1 - fpr) >= min_spec - 1e-12].max()
        got, _ = ttf.binary_sensitivity_at_specificity(preds, target, min_spec)
        assert got.item() == pytest.approx(want, abs=1e-6)
    precision, recall, thresholds = skm.precision_recall_curve(target.numpy(), preds.double().numpy())
    for min_recall in (0.3, 0.7):
        ok = recall[:-1] >= min_recall
        got, threshold = ttf.binary_precision_at_fixed_recall(preds, target, min_recall)
        assert got.item() == pytest.approx(precision[:-1][ok].max(), abs=1e-6)
        p, r, t = precision[:-1][ok], recall[:-1][ok], thresholds[ok]
        best = (p == p.max()) & (r == r[p == p.max()].max())  # the best precision, then the best recall
        assert threshold.item() == np.float32(t[best].max())  # then the highest threshold


def test_a_column_without_positives_warns_with_the_readouts_name():
    with pytest.warns(UserWarning, match="MulticlassEER|EER: ROC: no positive sample for class \\[2\\]"):
        ttc.MulticlassEER(NUM).update(_cp, _ct_nopos).compute()
    with pytest.warns(UserWarning, match="RecallAtFixedPrecision: PrecisionRecallCurve: no positive"):
        value, threshold = ttf.binary_recall_at_fixed_precision(_bp, torch.zeros_like(_bt), 0.0, thresholds=5)
    assert value.item() == 0 and torch.isnan(threshold)


# -- task wrappers and task forms -------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
def test_task_wrappers_and_task_forms(family, task):
    cls_suffix, fn_suffix, option, values = FAMILIES[family]
    kw = {} if option is None else {option: values[-1]}
    counts = {"binary": {}, "multiclass": {"num_classes": NUM}, "multilabel": {"num_labels": NUM}}[task]
    metric = getattr(ttc, cls_suffix)(task=task, thresholds=9, **counts, **kw)
    assert type(metric).__name__ == task.capitalize() + cls_suffix
    assert type(getattr(tmc, cls_suffix)(task=task, thresholds=9, **counts, **kw)).__name__ == type(metric).__name__
    preds, target = DATA[task]
    task_fn = "logauc" if family == "LogAUC" else fn_suffix
    ours = _quiet(getattr(ttf, task_fn), preds, target, task=task, thresholds=9, **counts, **kw)
    theirs = _quiet(getattr(tmf, task_fn), preds, target, task=task, thresholds=9, **counts, **kw)
    assert_same(ours, theirs, f"{task_fn}(task={task})")
    with pytest.raises(ValueError, match="task"):
        getattr(ttc, cls_suffix)(task="regression", **kw)
    if task != "binary":
        with pytest.raises(ValueError, match="num_"):
            getattr(ttc, cls_suffix)(task=task, **kw)


def _params(fn, skip_first=False):
    params = list(inspect.signature(fn).parameters.values())[1 if skip_first else 0 :]
    return [(p.name, p.kind, p.default) for p in params]


_CLASS_ATTRIBUTES = (
    "is_differentiable",
    "higher_is_better",
    "full_state_update",
    "plot_lower_bound",
    "plot_upper_bound",
)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_torchmetrics_surface(family):
    cls_suffix, fn_suffix, _, _ = FAMILIES[family]
    for task in ("Binary", "Multiclass", "Multilabel"):
        ours, theirs = getattr(ttc, task + cls_suffix), getattr(tmc, task + cls_suffix)
        assert _params(ours.__init__) == _params(theirs.__init__), ours.__name__
        for attribute in _CLASS_ATTRIBUTES + (("plot_legend_name",) if task != "Binary" else ()):
            assert getattr(ours, attribute) == getattr(theirs, attribute), (ours.__name__, attribute)
        name = f"{task.lower()}_{fn_suffix}"
        assert _params(getattr(ttf, name)) == _params(getattr(tmf, name)), name
    ours, theirs = getattr(ttc, cls_suffix), getattr(tmc, cls_suffix)
    assert _params(ours.__new__, True) == _params(theirs.__new__, True), cls_suffix
    task_fn = "logauc" if family == "LogAUC" else fn_suffix
    assert _params(getattr(ttf, task_fn)) == _params(getattr(tmf, task_fn)), task_fn


# -- collection: one state with AUROC and ROC -------------------------------------------------


def readout_collection(task, thresholds):
    """Module level, so the spawned ranks can build it: AUROC, ROC and every readout, one state."""
    num = () if task == "binary" else (NUM,)
    prefix = task.capitalize()
    members = {"auroc": getattr(ttc, prefix + "AUROC")(*num, thresholds=thresholds)}
    members["roc"] = getattr(ttc, prefix + "ROC")(*num, thresholds=thresholds)
    for family, (cls_suffix, _, option, values) in FAMILIES.items():
        kw = {} if option is None else {option: values[1 % len(values)]}
        if family == "LogAUC" and task != "binary":
            kw["average"] = "macro"  # the functional forms' default
        members[family] = getattr(ttc, prefix + cls_suffix)(*num, thresholds=thresholds, **kw)
    return MetricCollection(members)


def _collection_reference(task, thresholds):
    def ref(preds, target):
        num = () if task == "binary" else (NUM,)
        out = {
            "auroc": getattr(tmf, f"{task}_auroc")(preds, target, *num, thresholds=thresholds),
            "roc": getattr(tmf, f"{task}_roc")(preds, target, *num, thresholds=thresholds),
        }
        for family, (_, fn_suffix, option, values) in FAMILIES.items():
            kw = {} if option is None else {option: values[1 % len(values)]}
            out[family] = _quiet(getattr(tmf, f"{task}_{fn_suffix}"), preds, target, *num, thresholds=thresholds, **kw)
        return out

    return ref


@pytest.mark.parametrize("thresholds", [None, 16])
@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
def test_a_collection_holds_one_state_for_auroc_roc_and_every_readout(task, thresholds):
    collection = readout_collection(task, thresholds)
    assert len(collection.compute_groups) == 1, collection.compute_groups
    preds, target = DATA[task]
    for batch in _batches(preds, target):
        collection.update(*batch)
    owner = collection["auroc"]
    for name in ("roc",) + tuple(FAMILIES):
        for state in owner.state_names:  # the same tensors (exact: the same rows), not copies
            a, b = getattr(owner, state), getattr(collection[name], state)
            assert a is b or (torch.equal(a, b) and a.data_ptr() == b.data_ptr()), (name, state)
    got = _quiet(collection.compute)
    want = _collection_reference(task, thresholds)(preds, target)
    for name, value in want.items():
        if name == "roc" and task != "binary" and thresholds is None:
            for ours, theirs in zip(got[name], value):
                for a, b in zip(ours, theirs):
                    assert_same(a, b, name)
            continue
        assert_same(got[name] if not isinstance(value, list) else got[name], value, name)


# -- life cycle, one process and 3 ranks ------------------------------------------------------


def _tm_reference(task, family, thresholds, data):
    num, kw = _args(task, family, FAMILIES[family][3][1 % len(FAMILIES[family][3])])
    fn = getattr(tmf, f"{task}_{FAMILIES[family][1]}")
    ignore = -1 if "ignore" in data else None
    return lambda p, t: _quiet(fn, p, t, *num, thresholds=thresholds, ignore_index=ignore, **kw)


def _lifecycle_cases():
    cases = []
    for i, family in enumerate(FAMILIES):
        for j, task in enumerate(("binary", "multiclass", "multilabel")):
            data = task + ("-ignore" if task != "multiclass" and (i + j) % 2 else "")
            thresholds = None if (i + j) % 2 == 0 else [0.0, 0.1, 0.4, 0.4, 0.7, 1.0]
            num, kw = _args(task, family, FAMILIES[family][3][1 % len(FAMILIES[family][3])])
            cls = getattr(ttc, task.capitalize() + FAMILIES[family][0])
            ignore = -1 if "ignore" in data else None
            factory = functools.partial(cls, *num, thresholds=thresholds, ignore_index=ignore, **kw)
            name = f"{cls.__name__}-{'exact' if thresholds is None else 'binned'}-{data}"
            cases.append(
                MetricCase(name, factory, _batches(*DATA[data]), _tm_reference(task, family, thresholds, data))
            )
    for task in ("binary", "multilabel"):
        thresholds = 16 if task == "binary" else None
        cases.append(
            MetricCase(
                f"collection-{task}",
                functools.partial(readout_collection, task, thresholds),
                _batches(*DATA[task]),
                _collection_reference(task, thresholds),
                rtol=1e-6,
                atol=1e-7,
            )
        )
    return cases


CASES = _lifecycle_cases()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check_metric(case)


@pytest.mark.distributed
def test_distributed_three_ranks():
    run_distributed_cases(CASES)  # ONE 3-rank gloo run for all the cases


# -- bad options and batches ------------------------------------------------------------------


@pytest.mark.parametrize("family", ["PAFR", "RAFP", "SAS", "SPAS"])
@pytest.mark.parametrize(
    "bad, error",
    [
        (1.5, ValueError),
        (-0.1, ValueError),
        (float("nan"), ValueError),
        ("0.5", TypeError),
        (True, TypeError),
        (None, TypeError),
    ],
)
def test_a_minimum_outside_0_1_is_refused_at_construction(family, bad, error):
    cls_suffix, fn_suffix, option, _ = FAMILIES[family]
    for task, num in (("Binary", ()), ("Multiclass", (NUM,)), ("Multilabel", (NUM,))):
        with pytest.raises(error, match=option):
            getattr(ttc, task + cls_suffix)(*num, **{option: bad})
        with pytest.raises(error, match=option):
            getattr(ttf, f"{task.lower()}_{fn_suffix}")(_bp[:4], _bt[:4], *num, **{option: bad})


@pytest.mark.parametrize(
    "bad, error",
    [
        ((0.1, 0.05), ValueError),
        ((0.0, 1.5), ValueError),
        ((0.1,), ValueError),
        ("ab", ValueError),
        ((0.1, "x"), TypeError),
    ],
)
def test_a_bad_fpr_range_is_refused_even_without_validation(bad, error):
    with pytest.raises(error, match="fpr_range"):
        ttc.BinaryLogAUC(fpr_range=bad)  # validate_args=False by default, as torchmetrics'
    with pytest.raises(error, match="fpr_range"):
        ttc.MultilabelLogAUC(NUM, fpr_range=bad, validate_args=False)
    with pytest.raises(error, match="fpr_range"):
        ttf.multilabel_logauc(_lp[:4], _lt[:4], NUM, fpr_range=bad)  # torchmetrics: unchecked


def test_bad_averages_are_refused_at_construction():
    with pytest.raises(ValueError, match="average"):
        ttc.MulticlassLogAUC(NUM, average="weighted")  # torchmetrics: at compute
    with pytest.raises(ValueError, match="average"):
        ttc.MulticlassEER(NUM, average="weighted")
    with pytest.raises(ValueError, match="average"):
        ttf.multiclass_eer(_cp[:4], _ct[:4], NUM, average="none")


@pytest.mark.parametrize("thresholds", [None, 10])
def test_a_refused_batch_leaves_the_state_as_it_was(thresholds):
    for metric, task, bad in (
        (ttc.BinaryEER(thresholds=thresholds), "binary", (torch.tensor([0.2, float("nan")]), torch.tensor([0, 1]))),
        (ttc.MulticlassPrecisionAtFixedRecall(NUM, 0.5, thresholds=thresholds), "multiclass", (_cp[:2], _ct[:2] + 3)),
        (ttc.MultilabelLogAUC(NUM, thresholds=thresholds), "multilabel", (_lp[:2], torch.full((2, NUM), 2))),
        (ttc.BinarySpecificityAtSensitivity(0.5, thresholds=thresholds), "binary", (_bp[:3], _bt[:2])),
    ):
        preds, target = DATA[task]
        metric.update(preds[:20], target[:20])
        assert_rejects(metric, bad, ValueError, "preds|target")


def test_logauc_of_a_curve_that_never_leaves_fpr_0_is_nan_with_a_warning():
    """No negative sample: FPR 0 at every threshold, so the curve never reaches fpr_range
    (torchmetrics extrapolates along the vertical curve: inf, which its macro average takes in)."""
    target = _lt.clone()
    target[:, 0] = 1  # label 0: no negative
    for thresholds in (None, 9):
        with pytest.warns(UserWarning, match=r"LogAUC is undefined \(NaN\) for label \[0\]"):
            per_label = ttf.multilabel_logauc(_lp, target, NUM, average=None, thresholds=thresholds)
        assert torch.isnan(per_label[0]) and torch.isfinite(per_label[1:]).all()
        macro = _quiet(ttf.multilabel_logauc, _lp, target, NUM, thresholds=thresholds)
        torch.testing.assert_close(macro, per_label[1:].mean())
    assert torch.isinf(_quiet(tmf.binary_logauc, _bp, torch.ones_like(_bt), thresholds=9))
    with pytest.warns(UserWarning, match="LogAUC is undefined"):
        assert torch.isnan(ttf.binary_logauc(_bp, torch.ones_like(_bt), thresholds=9))
