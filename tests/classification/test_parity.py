"""torchtally's classification count metrics against torchmetrics 1.9 on the same random inputs,
over torchmetrics' documented argument grid: tasks, averages, ignore_index, top_k, thresholds,
multidim_average, float targets, labels / probabilities / logits, [N, C, ...] inputs. Every class
goes through the shared parity tester (forward per batch, compute after the forwards, update +
compute; a selection also on 2 gloo ranks with uneven shards); every function runs on one batch.
Values, dtypes and shapes must be equal (counts exactly, ratios within 1e-6)."""

import functools
import itertools
import warnings

import pytest
import torch
import torchmetrics.classification as tmc
import torchmetrics.functional.classification as tmf
from support.parity_tester import ParityCase, check_parity, run_parity_distributed

import torchtally.classification as ttc
import torchtally.functional.classification as ttf

# A normalised confusion matrix with an empty row warns (both libraries); checked on its own below.
pytestmark = pytest.mark.filterwarnings("ignore:.*NaN values found in confusion matrix")

N, C, L, EXTRA = 24, 4, 3, 3
BATCHES = 3
RATIOS = ("Accuracy", "Precision", "Recall", "F1Score", "FBetaScore", "Specificity", "HammingDistance")
STAT_FAMILY = RATIOS + ("StatScores",)
MATRIX_FAMILY = ("ConfusionMatrix", "JaccardIndex", "MatthewsCorrCoef", "CohenKappa")


def _gen(*key) -> torch.Generator:
    return torch.Generator().manual_seed(hash(key) % (2**31))


def binary_batches(kind: str, multidim: bool, ignore_index, float_target: bool, key):
    g = _gen("binary", kind, multidim, ignore_index, float_target, key)
    shape = (BATCHES, N, EXTRA) if multidim else (BATCHES, N)
    target = torch.randint(0, 2, shape, generator=g)
    logits = torch.randn(shape, generator=g) * 2 + (target - 0.5)
    preds = {"labels": (logits > 0).long(), "probs": logits.sigmoid(), "logits": logits}[kind]
    if ignore_index is not None:
        target = torch.where(torch.rand(shape, generator=g) < 0.15, ignore_index, target)
    if float_target:
        target = target.float()
    return list(zip(preds, target))


def multiclass_batches(kind: str, multidim: bool, ignore_index, key, classes: int = C):
    g = _gen("multiclass", kind, multidim, ignore_index, key, classes)
    tshape = (BATCHES, N, EXTRA) if multidim else (BATCHES, N)
    target = torch.randint(0, classes, tshape, generator=g)
    scores = torch.randn(BATCHES, N, classes, *tshape[2:], generator=g)
    scores.scatter_add_(2, target.unsqueeze(2), torch.full(scores[:, :, :1].shape, 1.0))
    preds = {"labels": scores.argmax(2), "probs": scores.softmax(2), "logits": scores}[kind]
    if ignore_index is not None:
        target = torch.where(torch.rand(tshape, generator=g) < 0.15, ignore_index, target)
    return list(zip(preds, target))


def multilabel_batches(kind: str, multidim: bool, ignore_index, float_target: bool, key):
    g = _gen("multilabel", kind, multidim, ignore_index, float_target, key)
    shape = (BATCHES, N, L, EXTRA) if multidim else (BATCHES, N, L)
    target = torch.randint(0, 2, shape, generator=g)
    logits = torch.randn(shape, generator=g) * 2 + (target - 0.5)
    preds = {"labels": (logits > 0).long(), "probs": logits.sigmoid(), "logits": logits}[kind]
    if ignore_index is not None:
        target = torch.where(torch.rand(shape, generator=g) < 0.15, ignore_index, target)
    if float_target:
        target = target.float()
    return list(zip(preds, target))


def assert_same(ours: torch.Tensor, theirs: torch.Tensor, what: str) -> None:
    assert ours.shape == theirs.shape, f"{what}: shape {tuple(ours.shape)} != torchmetrics {tuple(theirs.shape)}"
    assert ours.dtype == theirs.dtype, f"{what}: dtype {ours.dtype} != torchmetrics {theirs.dtype}"
    if ours.dtype.is_floating_point:
        torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=1e-6, equal_nan=True, msg=lambda m: f"{what}: {m}")
    else:
        assert torch.equal(ours, theirs), f"{what}:\n{ours}\n!= torchmetrics\n{theirs}"


def _theirs(batch):
    """torchmetrics' confusion-matrix metrics fail on float targets (bincount of floats): it gets the
    same 0/1 targets as integers, so our float-target path is compared with its integer path."""
    preds, target = batch
    return preds, (target.long() if target.is_floating_point() else target)


@functools.cache
def _integer_targets(cls: type) -> type:
    """torchmetrics' class ``cls`` fed the integer form of float 0/1 targets (see _theirs)."""

    class IntegerTargets(cls):
        def update(self, preds, target):
            super().update(*_theirs((preds, target)))

    IntegerTargets.__name__ = cls.__name__
    return IntegerTargets


def parity_case(name, args, kwargs, batches) -> ParityCase:
    return ParityCase(
        f"{name}{args}{kwargs}",
        functools.partial(getattr(ttc, name), *args, **kwargs),
        functools.partial(_integer_targets(getattr(tmc, name)), *args, **kwargs),
        batches,
    )


def check_class(name, args, kwargs, batches):
    check_parity(parity_case(name, args, kwargs, batches))


def check_function(name, args, kwargs, batch):
    what = f"{name}{args}{kwargs}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = getattr(ttf, name)(*batch, *args, **kwargs)
        theirs = getattr(tmf, name)(*_theirs(batch), *args, **kwargs)
    assert_same(ours, theirs, what)


def _snake(family: str) -> str:
    return {
        "F1Score": "f1_score",
        "FBetaScore": "fbeta_score",
        "StatScores": "stat_scores",
        "HammingDistance": "hamming_distance",
        "ConfusionMatrix": "confusion_matrix",
        "JaccardIndex": "jaccard_index",
        "MatthewsCorrCoef": "matthews_corrcoef",
        "CohenKappa": "cohen_kappa",
    }.get(family, family.lower())


def _beta(family):
    return (0.7,) if family == "FBetaScore" else ()


# -- binary ------------------------------------------------------------------------------------

# Input layouts: every value of each option, and every pair of two options' values, occurs at least
# once (a covering set of the full product, which would take minutes against torchmetrics).
# (preds kind, [N, ...] extra dim, ignore_index, float target)
BINARY_INPUTS = [
    ("labels", False, None, False),
    ("labels", True, -1, True),
    ("probs", False, -1, False),
    ("probs", True, None, True),
    ("logits", False, None, True),
    ("logits", True, -1, False),
    ("probs", True, -1, False),
    ("logits", False, -1, True),
]


@pytest.mark.parametrize("family", STAT_FAMILY)
@pytest.mark.parametrize("kind, multidim, ignore_index, float_target", BINARY_INPUTS, ids=str)
def test_binary_stat_family(family, kind, multidim, ignore_index, float_target):
    batches = binary_batches(kind, multidim, ignore_index, float_target, family)
    for mda, threshold in zip(["global", "samplewise"] if multidim else ["global", "global"], [0.5, 0.3]):
        kwargs = dict(threshold=threshold, multidim_average=mda, ignore_index=ignore_index)
        check_class("Binary" + family, _beta(family), kwargs, batches)
        check_function("binary_" + _snake(family), _beta(family), kwargs, batches[0])


@pytest.mark.parametrize("family", MATRIX_FAMILY)
@pytest.mark.parametrize("kind, multidim, ignore_index, float_target", BINARY_INPUTS, ids=str)
def test_binary_matrix_family(family, kind, multidim, ignore_index, float_target):
    batches = binary_batches(kind, multidim, ignore_index, float_target, family)
    options = {
        "ConfusionMatrix": [dict(normalize=n) for n in (None, "true", "pred", "all")],
        "CohenKappa": [dict(weights=w) for w in (None, "linear", "quadratic")],
        "JaccardIndex": [dict(zero_division=z) for z in (0, 1)],
    }.get(family, [{}])
    for extra, threshold in zip(options, itertools.cycle([0.5, 0.3])):
        kwargs = dict(threshold=threshold, ignore_index=ignore_index, **extra)
        check_class("Binary" + family, (), kwargs, batches)
        check_function("binary_" + _snake(family), (), kwargs, batches[0])


# -- multiclass --------------------------------------------------------------------------------

# (preds kind, [N, C, ...] extra dim, ignore_index)
MULTICLASS_INPUTS = [
    ("labels", False, None),
    ("labels", True, 0),
    ("labels", False, -1),
    ("probs", False, 0),
    ("probs", True, -1),
    ("probs", True, None),
    ("logits", False, -1),
    ("logits", True, 0),
    ("logits", False, None),
]
AVERAGES = ["micro", "macro", "weighted", None]


@pytest.mark.parametrize("family", STAT_FAMILY)
@pytest.mark.parametrize("kind, multidim, ignore_index", MULTICLASS_INPUTS, ids=str)
def test_multiclass_stat_family(family, kind, multidim, ignore_index):
    batches = multiclass_batches(kind, multidim, ignore_index, family)
    top_ks = [1] if kind == "labels" else [1, 2]
    mdas = ["global", "samplewise"] if multidim else ["global"]
    # every average with every top_k and every multidim_average, not all three at once
    combos = {(a, k, m) for a, (k, m) in zip(AVERAGES * 2, itertools.cycle(itertools.product(top_ks, mdas)))}
    for average, top_k, mda in sorted(combos, key=str):
        kwargs = dict(average=average, top_k=top_k, multidim_average=mda, ignore_index=ignore_index)
        check_class("Multiclass" + family, _beta(family) + (C,), kwargs, batches)
        check_function("multiclass_" + _snake(family), _beta(family) + (C,), kwargs, batches[0])


@pytest.mark.parametrize("family", MATRIX_FAMILY)
@pytest.mark.parametrize("kind, multidim, ignore_index", MULTICLASS_INPUTS, ids=str)
def test_multiclass_matrix_family(family, kind, multidim, ignore_index):
    batches = multiclass_batches(kind, multidim, ignore_index, family)
    options = {
        "ConfusionMatrix": [dict(normalize=n) for n in (None, "true", "pred", "all")],
        "CohenKappa": [dict(weights=w) for w in (None, "linear", "quadratic")],
        "JaccardIndex": [dict(average=a, zero_division=z) for a in AVERAGES for z in (0, 1)],
    }.get(family, [{}])
    for extra in options:
        kwargs = dict(ignore_index=ignore_index, **extra)
        check_class("Multiclass" + family, (C,), kwargs, batches)
        check_function("multiclass_" + _snake(family), (C,), kwargs, batches[0])


def test_multiclass_top_k_with_many_classes_and_missing_classes():
    """top_k up to C, and classes that never occur (the macro rules differ under top_k)."""
    g = _gen("many")
    classes = 7
    target = torch.randint(0, 4, (BATCHES, 40), generator=g)  # classes 4..6 never in target
    scores = torch.randn(BATCHES, 40, classes, generator=g)
    batches = list(zip(scores, target))
    for family, top_k, average in itertools.product(STAT_FAMILY, [2, 3, classes], AVERAGES):
        kwargs = dict(average=average, top_k=top_k)
        check_class("Multiclass" + family, _beta(family) + (classes,), kwargs, batches)
        check_function("multiclass_" + _snake(family), _beta(family) + (classes,), kwargs, batches[0])


# -- multilabel --------------------------------------------------------------------------------

MULTILABEL_INPUTS = BINARY_INPUTS


@pytest.mark.parametrize("family", STAT_FAMILY)
@pytest.mark.parametrize("kind, multidim, ignore_index, float_target", MULTILABEL_INPUTS, ids=str)
def test_multilabel_stat_family(family, kind, multidim, ignore_index, float_target):
    batches = multilabel_batches(kind, multidim, ignore_index, float_target, family)
    for average, mda in itertools.product(AVERAGES, ["global", "samplewise"] if multidim else ["global"]):
        kwargs = dict(threshold=0.4, average=average, multidim_average=mda, ignore_index=ignore_index)
        check_class("Multilabel" + family, _beta(family) + (L,), kwargs, batches)
        check_function("multilabel_" + _snake(family), _beta(family) + (L,), kwargs, batches[0])


@pytest.mark.parametrize("family", ("ConfusionMatrix", "JaccardIndex", "MatthewsCorrCoef"))
@pytest.mark.parametrize("kind, multidim, ignore_index, float_target", MULTILABEL_INPUTS, ids=str)
def test_multilabel_matrix_family(family, kind, multidim, ignore_index, float_target):
    batches = multilabel_batches(kind, multidim, ignore_index, float_target, family)
    options = {
        "ConfusionMatrix": [dict(normalize=n) for n in (None, "true", "pred", "all")],
        "JaccardIndex": [dict(average=a) for a in AVERAGES],
    }.get(family, [{}])
    for extra in options:
        kwargs = dict(ignore_index=ignore_index, **extra)
        check_class("Multilabel" + family, (L,), kwargs, batches)
        check_function("multilabel_" + _snake(family), (L,), kwargs, batches[0])


# -- inputs, zero_division, dtypes -------------------------------------------------------------


@pytest.mark.parametrize("family", ["Precision", "Recall", "F1Score", "FBetaScore", "JaccardIndex"])
def test_zero_division(family):
    preds, target = torch.tensor([0, 0, 0, 0]), torch.tensor([0, 0, 0, 0])  # every tp + fp, tp + fn is 0
    for task, size in (("Binary", ()), ("Multiclass", (3,)), ("Multilabel", (2,))):
        if task == "Multilabel":
            preds, target = preds.reshape(2, 2), target.reshape(2, 2)
        for zero_division, average in itertools.product([0, 1], ["micro", "macro", None]):
            kwargs = dict(zero_division=zero_division)
            if task != "Binary":
                kwargs["average"] = average
            args = _beta(family) + size
            check_class(task + family, args, kwargs, [(preds, target)])
            check_function(f"{task.lower()}_{_snake(family)}", args, kwargs, (preds, target))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_float_preds_of_any_dtype_give_float32_ratios(dtype):
    g = _gen("dtype", str(dtype))
    preds, target = torch.rand(50, C, generator=g).to(dtype), torch.randint(0, C, (50,), generator=g)
    for name in ("MulticlassAccuracy", "MulticlassF1Score", "MulticlassJaccardIndex", "MulticlassCohenKappa"):
        check_class(name, (C,), {}, [(preds, target)])
    check_class("MulticlassStatScores", (C,), dict(average="macro"), [(preds, target)])
    bp, bt = torch.rand(50, generator=g).to(dtype), torch.randint(0, 2, (50,), generator=g).to(dtype)
    for name in ("BinaryAccuracy", "BinaryPrecision", "BinaryMatthewsCorrCoef"):
        check_class(name, (), {}, [(bp, bt)])
    check_class("BinaryConfusionMatrix", (), dict(normalize="true"), [(bp, bt)])


@pytest.mark.parametrize("normalize", ["true", "pred", "all"])
def test_normalized_confusion_matrix_warns_as_torchmetrics(normalize):
    """A 0/0 entry of a normalised matrix is 0 with torchmetrics' UserWarning naming how many;
    a matrix without one gives no warning."""
    preds, target = torch.tensor([0, 1, 1, 0]), torch.tensor([0, 1, 0, 0])  # class 2 never seen
    # "all" has a 0/0 only when every sample is ignored
    bad_target = torch.full_like(target, -1) if normalize == "all" else target
    for lib_f, lib_c in ((ttf, ttc), (tmf, tmc)):
        with pytest.warns(UserWarning, match="NaN values found in confusion matrix have been replaced with zeros"):
            lib_f.multiclass_confusion_matrix(preds, bad_target, 3, normalize=normalize, ignore_index=-1)
        metric = lib_c.MulticlassConfusionMatrix(3, normalize=normalize, ignore_index=-1)
        metric.update(preds, bad_target)
        with pytest.warns(UserWarning, match="NaN values found"):
            metric.compute()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            lib_f.multiclass_confusion_matrix(preds, target, 2, normalize=normalize)
            lib_f.binary_confusion_matrix(preds, target, normalize=normalize)
    with pytest.warns(UserWarning, match="^4 NaN values"):  # per label one empty row of 2 entries
        ttf.multilabel_confusion_matrix(torch.tensor([[1, 0]]), torch.tensor([[1, 0]]), 2, normalize="true")


# -- distributed: synced result on uneven shards == torchmetrics over all the data --------------


def _distributed_cases():
    binary = binary_batches("logits", True, -1, True, "dist") * 2  # 6 batches: uneven shards on 2 and 3 ranks
    multiclass = multiclass_batches("probs", True, 0, "dist") * 2
    multilabel = multilabel_batches("probs", True, -1, False, "dist") * 2
    cases = []
    for family in STAT_FAMILY:
        for mda in ("global", "samplewise"):
            cases.append(
                parity_case("Binary" + family, _beta(family), dict(multidim_average=mda, ignore_index=-1), binary)
            )
            cases.append(
                parity_case(
                    "Multiclass" + family,
                    _beta(family) + (C,),
                    dict(average="macro", top_k=2, multidim_average=mda, ignore_index=0),
                    multiclass,
                )
            )
            cases.append(
                parity_case(
                    "Multilabel" + family,
                    _beta(family) + (L,),
                    dict(average="weighted", multidim_average=mda, ignore_index=-1),
                    multilabel,
                )
            )
    for family in MATRIX_FAMILY:
        cases.append(parity_case("Binary" + family, (), dict(ignore_index=-1), binary))
        cases.append(parity_case("Multiclass" + family, (C,), dict(ignore_index=0), multiclass))
        if family != "CohenKappa":
            cases.append(parity_case("Multilabel" + family, (L,), dict(ignore_index=-1), multilabel))
    return cases


@pytest.mark.distributed
@pytest.mark.parametrize("world_size", [2, 3])
def test_distributed_parity(world_size):
    run_parity_distributed(_distributed_cases(), world_size=world_size)
