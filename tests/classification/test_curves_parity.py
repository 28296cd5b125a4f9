"""The curve metrics against torchmetrics 1.9 on the same random batches, over torchmetrics'
documented argument grid (task, average, thresholds None/int/list/tensor, max_fpr,
ignore_index, float targets, logits, extra dims): the classes through the shared parity tester
(forward per batch, update + compute, update_count, and on 2 gloo ranks with uneven shards),
the functional and task forms in one call. Values, dtypes and shapes must agree.

Random data here always has positives and negatives in every column, so the one value policy
that differs on purpose (AUROC of a column without one of them: NaN, torchmetrics 0) is not
exercised; test_curves_edges covers it.
"""

import functools
import itertools
import random
import warnings

import pytest
import torch
import torchmetrics.classification as tmc
import torchmetrics.functional.classification as tmf
from support.parity_tester import ParityCase, check_parity, run_parity_distributed

import torchtally.classification as ttc
import torchtally.functional as ttf

C = 4  # classes / labels
BATCHES, BATCH = 3, 48
THRESHOLDS = {
    "exact": None,
    "int": 11,
    "list": [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0],
    "tensor64": torch.linspace(0, 1, 6, dtype=torch.float64),
}
RTOL, ATOL = 1e-5, 1e-6


def _binary_batches(seed, logits, multidim, ignore_index):
    g = torch.Generator().manual_seed(seed)
    shape = (BATCH, 3) if multidim else (BATCH,)
    out = []
    for _ in range(BATCHES):
        target = torch.randint(0, 2, shape, generator=g)
        scores = torch.rand(shape, generator=g) * 0.7 + 0.3 * target  # informative, no exact ties
        if logits:
            scores = (scores - 0.5) * 6
        if ignore_index is not None:
            target = torch.where(torch.rand(shape, generator=g) < 0.15, torch.tensor(ignore_index), target)
        out.append((scores, target))
    return out


def _multiclass_batches(seed, logits, multidim, ignore_index):
    g = torch.Generator().manual_seed(seed)
    extra = (3,) if multidim else ()
    out = []
    for _ in range(BATCHES):
        target = torch.randint(0, C, (BATCH,) + extra, generator=g)
        raw = torch.randn((BATCH, C) + extra, generator=g) + 1.5 * torch.nn.functional.one_hot(target, C).movedim(-1, 1)
        scores = raw if logits else raw.softmax(1)
        if ignore_index is not None:
            target = torch.where(torch.rand(target.shape, generator=g) < 0.15, torch.tensor(ignore_index), target)
        out.append((scores, target))
    return out


def _multilabel_batches(seed, logits, multidim, ignore_index):
    g = torch.Generator().manual_seed(seed)
    shape = (BATCH, C, 3) if multidim else (BATCH, C)
    out = []
    for _ in range(BATCHES):
        target = torch.randint(0, 2, shape, generator=g)
        scores = torch.rand(shape, generator=g) * 0.7 + 0.3 * target
        if logits:
            scores = (scores - 0.5) * 6
        if ignore_index is not None:
            target = torch.where(torch.rand(shape, generator=g) < 0.15, torch.tensor(ignore_index), target)
        out.append((scores, target))
    return out


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def assert_same(ours, theirs, where=""):
    """Same structure (tensor / tuple / list), shapes, dtypes and values (NaN where NaN)."""
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs), f"{where}: {type(ours).__name__} != {type(theirs).__name__}"
        assert len(ours) == len(theirs), f"{where}: length {len(ours)} != {len(theirs)}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{where}[{i}]")
        return
    assert isinstance(ours, torch.Tensor), where
    assert ours.dtype == theirs.dtype, f"{where}: dtype {ours.dtype} != {theirs.dtype}"
    assert ours.shape == theirs.shape, f"{where}: shape {tuple(ours.shape)} != {tuple(theirs.shape)}"
    torch.testing.assert_close(ours, theirs, rtol=RTOL, atol=ATOL, equal_nan=True, msg=lambda m: f"{where}: {m}")


def _grid():
    """(id, family, task, options, data options) over the documented grid, kept modest."""
    cases = []
    flags = list(itertools.product([False, True], repeat=3))  # logits, multidim, float target
    for family in ("AUROC", "AveragePrecision", "ROC", "PrecisionRecallCurve"):
        for task in ("binary", "multiclass", "multilabel"):
            if task == "binary":
                averages = [None]
            elif family in ("AUROC", "AveragePrecision"):
                averages = ["macro", "weighted", "none"] + (["micro"] if task == "multilabel" else [])
            else:
                averages = [None, "micro", "macro"] if task == "multiclass" else [None]
            for t_name, avg, ignore_index in itertools.product(THRESHOLDS, averages, [None, -1]):
                options = {"thresholds": t_name, "ignore_index": ignore_index}
                if avg is not None:
                    options["average"] = avg
                # flag combinations spread over the grid (seeded) without multiplying it out
                logits, multidim, float_target = random.Random(len(cases)).choice(flags)
                if task == "multiclass":
                    float_target = False  # class ids: torchmetrics and torchtally both want integers
                data = dict(logits=logits, multidim=multidim, float_target=float_target, ignore_index=ignore_index)
                cases.append((family, task, options, data))
                if family == "AUROC" and task == "binary":
                    cases.append((family, task, dict(options, max_fpr=0.5), data))
    return cases


GRID = _grid()


def _ids(case):
    family, task, options, data = case
    opts = ",".join(f"{k}={v}" for k, v in options.items())
    flags = ",".join(k for k in ("logits", "multidim", "float_target") if data[k])
    return f"{task}{family}[{opts}|{flags}]"


def _factories(family, task, options):
    prefix = {"binary": "Binary", "multiclass": "Multiclass", "multilabel": "Multilabel"}[task]
    kwargs = dict(options, thresholds=THRESHOLDS[options["thresholds"]])
    args = () if task == "binary" else (C,)
    ours = functools.partial(getattr(ttc, prefix + family), *args, **kwargs)
    theirs = functools.partial(getattr(tmc, prefix + family), *args, **kwargs)
    return ours, theirs, kwargs


def _batches(task, data, seed):
    make = {"binary": _binary_batches, "multiclass": _multiclass_batches, "multilabel": _multilabel_batches}[task]
    return make(seed, data["logits"], data["multidim"], data["ignore_index"])


class _FunctionalReference:
    """torchmetrics' functional form standing in for its class where the class fails
    (MulticlassROC / MulticlassPrecisionRecallCurve with average="micro" and thresholds: its
    micro update makes a [T, 2, 2] count for a [T, C, 2, 2] state). Batches are kept and the
    function runs on them at once, which is what the class would compute."""

    def __init__(self, fn, *args, **kwargs):
        self.fn, self.args, self.kwargs, self.batches = fn, args, kwargs, []

    @property
    def update_count(self):
        return len(self.batches)

    def update(self, preds, target):
        self.batches.append((preds, target))

    def compute(self):
        preds, target = (torch.cat(parts) for parts in zip(*self.batches))
        return self.fn(preds, target, *self.args, **self.kwargs)

    def __call__(self, preds, target):
        self.update(preds, target)
        return self.fn(preds, target, *self.args, **self.kwargs)


def _with_long_targets(cls):
    """The torchmetrics class fed the same labels as integers: most of them refuse float targets."""
    return type(cls.__name__, (cls,), {"update": lambda self, preds, target: cls.update(self, preds, target.long())})


def _parity_case(case):
    family, task, options, data = case
    ours, theirs, kwargs = _factories(family, task, options)
    batches = _batches(task, data, seed=len(_ids(case)))
    if data["float_target"]:
        batches = [(preds, target.float()) for preds, target in batches]
        theirs = functools.partial(_with_long_targets(theirs.func), *theirs.args, **theirs.keywords)
    if task == "multiclass" and options.get("average") == "micro" and options["thresholds"] != "exact":
        fn = getattr(tmf, "multiclass_" + {"ROC": "roc", "PrecisionRecallCurve": "precision_recall_curve"}[family])
        theirs = functools.partial(_FunctionalReference, fn, C, **kwargs)
    return ParityCase(_ids(case), ours=ours, theirs=theirs, batches=batches, rtol=RTOL, atol=ATOL)


PARITY_CASES = [_parity_case(c) for c in GRID]


@pytest.mark.parametrize("case", PARITY_CASES, ids=lambda c: c.name)
def test_class_matches_torchmetrics(case):
    """forward per batch, compute after forwards, update + compute, update_count
    (support.parity_tester)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_parity(case)


@pytest.mark.distributed
def test_class_matches_torchmetrics_on_two_ranks():
    """One spawned gloo run: uneven shards per rank, synced result == torchmetrics over all data."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_parity_distributed(PARITY_CASES[::2], world_size=2)


@pytest.mark.parametrize("case", GRID[::3], ids=[_ids(c) for c in GRID[::3]])
def test_functional_and_task_forms_match_torchmetrics(case):
    family, task, options, data = case
    _, _, kwargs = _factories(family, task, options)
    preds, target = _batches(task, data, seed=7)[0]
    name = {
        "AUROC": "auroc",
        "AveragePrecision": "average_precision",
        "ROC": "roc",
        "PrecisionRecallCurve": "precision_recall_curve",
    }[family]
    args = () if task == "binary" else (C,)
    theirs = _quiet(getattr(tmf, f"{task}_{name}"), preds, target, *args, **kwargs)
    ours_target = target.float() if data["float_target"] else target
    assert_same(_quiet(getattr(ttf, f"{task}_{name}"), preds, ours_target, *args, **kwargs), theirs, _ids(case))
    count = {} if task == "binary" else {"num_classes" if task == "multiclass" else "num_labels": C}
    assert_same(_quiet(getattr(ttf, name), preds, ours_target, task, **count, **kwargs), theirs, "task form")


@pytest.mark.parametrize("normalization", ["sigmoid", None])
@pytest.mark.parametrize("family", ["AveragePrecision", "ROC", "PrecisionRecallCurve"])
@pytest.mark.parametrize("thresholds", [None, 9])
def test_binary_normalization_matches_torchmetrics(family, normalization, thresholds):
    ours = getattr(ttc, "Binary" + family)(thresholds=thresholds, normalization=normalization)
    theirs = getattr(tmc, "Binary" + family)(thresholds=thresholds, normalization=normalization)
    for preds, target in _binary_batches(3, logits=True, multidim=False, ignore_index=None):
        ours.update(preds, target)
        theirs.update(preds, target)
    assert_same(_quiet(ours.compute), _quiet(theirs.compute), f"{family} normalization={normalization}")


def test_positional_arguments_reach_the_same_options():
    """torchmetrics' positional order: a call written against torchmetrics means the same here."""
    preds, target = _multiclass_batches(5, logits=False, multidim=False, ignore_index=-1)[0]
    pairs = [
        (ttc.MulticlassAUROC(C, "weighted", 20, -1), tmc.MulticlassAUROC(C, "weighted", 20, -1)),
        (ttc.MulticlassROC(C, 20, "macro", -1), tmc.MulticlassROC(C, 20, "macro", -1)),
        (
            ttc.MulticlassPrecisionRecallCurve(C, 20, "macro", -1),
            tmc.MulticlassPrecisionRecallCurve(C, 20, "macro", -1),
        ),
        (ttc.MulticlassAveragePrecision(C, "none", 20, -1), tmc.MulticlassAveragePrecision(C, "none", 20, -1)),
    ]
    for ours, theirs in pairs:
        assert_same(
            _quiet(ours.update(preds, target).compute),
            _quiet(lambda: (theirs.update(preds, target), theirs.compute())[1]),
            type(ours).__name__,
        )
    b_preds, b_target = _binary_batches(5, logits=False, multidim=False, ignore_index=None)[0]
    assert_same(
        ttc.BinaryAUROC(0.3, 15).update(b_preds, b_target).compute(),
        tmf.binary_auroc(b_preds, b_target, 0.3, 15),
        "BinaryAUROC(max_fpr, thresholds)",
    )
    assert_same(
        ttf.binary_auroc(b_preds, b_target, 0.3, 15), tmf.binary_auroc(b_preds, b_target, 0.3, 15), "binary_auroc"
    )
