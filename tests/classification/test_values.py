"""Classification values: every metric, task, average and input kind against scikit-learn
(support.classification_refs) and against torchmetrics on the same inputs, plus the edge cases."""

import math

import numpy as np
import pytest
import torch
import torchmetrics.functional.classification as tmf
from support.classification_refs import (
    AVERAGES,
    BETA,
    STAT_METRICS,
    binary_data,
    binary_labels,
    multiclass_data,
    multiclass_labels,
    multilabel_data,
    sk_binary,
    sk_multiclass,
    sk_multilabel,
    sk_topk_accuracy,
)

import torchtally.functional as ttf

C, L, N = 5, 4, 300
TOL = dict(rtol=1e-5, atol=1e-6)


def call(lib, task, name, preds, target, size=None, **kw):
    """lib.<task>_<name>(preds, target[, beta][, num_classes / num_labels], **kw)."""
    if lib is tmf and name == "dice":
        name = "f1_score"  # torchmetrics has no classification Dice; Dice is F1
    args = (preds, target) + ((BETA,) if name == "fbeta_score" else ())
    if task != "binary":
        args += (size,)
    return getattr(lib, f"{task}_{name}")(*args, **kw)


def check(task, name, preds, target, expected, size=None, **kw):
    """torchtally == expected (scikit-learn) == torchmetrics."""
    ours = call(ttf, task, name, preds, target, size, **kw)
    theirs = call(tmf, task, name, preds, target, size, **kw)
    exp = torch.as_tensor(np.asarray(expected, dtype=np.float64))
    what = f"{task}_{name}({kw})"
    torch.testing.assert_close(ours.double(), exp, **TOL, msg=lambda m: f"{what} vs scikit-learn: {m}")
    torch.testing.assert_close(ours.double(), theirs.double(), **TOL, msg=lambda m: f"{what} vs torchmetrics: {m}")
    return ours


# -- binary -----------------------------------------------------------------------------------

BINARY_NAMES = STAT_METRICS + ("stat_scores", "matthews_corrcoef", "cohen_kappa", "confusion_matrix")


@pytest.mark.parametrize("kind", ["probs", "logits", "labels"])
@pytest.mark.parametrize("name", BINARY_NAMES)
def test_binary_vs_sklearn_and_torchmetrics(name, kind):
    preds, target = binary_data(N, seed=1, kind=kind)
    for threshold in (0.5, 0.3):
        p = binary_labels(preds, threshold)
        check("binary", name, preds, target, sk_binary(name, target.numpy(), p), threshold=threshold)


@pytest.mark.parametrize("normalize", [None, "none", "true", "pred", "all"])
def test_binary_confusion_matrix_normalize(normalize):
    preds, target = binary_data(N, seed=2, kind="logits")
    p = binary_labels(preds)
    sk_norm = None if normalize == "none" else normalize
    out = check(
        "binary",
        "confusion_matrix",
        preds,
        target,
        sk_binary("confusion_matrix", target.numpy(), p, normalize=sk_norm),
        normalize=normalize,
    )
    assert out.dtype == (torch.int64 if sk_norm is None else torch.float32)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_binary_cohen_kappa_weights(weights):
    preds, target = binary_data(N, seed=3)
    expected = sk_binary("cohen_kappa", target.numpy(), binary_labels(preds), weights=weights)
    check("binary", "cohen_kappa", preds, target, expected, weights=weights)


def test_binary_result_dtypes():
    preds, target = binary_data(50, seed=4)
    assert ttf.binary_accuracy(preds, target).dtype == torch.float32
    assert ttf.binary_stat_scores(preds, target).dtype == torch.int64


# -- multiclass -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["scores", "probs", "labels"])
@pytest.mark.parametrize("average", AVERAGES + (None,))
@pytest.mark.parametrize("name", STAT_METRICS + ("stat_scores",))
def test_multiclass_vs_sklearn_and_torchmetrics(name, average, kind):
    scores, target = multiclass_data(N, C, seed=5)
    preds = {"scores": scores, "probs": scores.softmax(1), "labels": scores.argmax(1)}[kind]
    avg = "none" if average is None else average
    expected = sk_multiclass(name, target.numpy(), multiclass_labels(preds), C, avg)
    out = check("multiclass", name, preds, target, expected, C, average=average)
    if name == "stat_scores":
        assert out.dtype == (torch.int64 if avg in ("micro", "none") else torch.float32)


@pytest.mark.parametrize("normalize", [None, "none", "true", "pred", "all"])
def test_multiclass_confusion_matrix(normalize):
    scores, target = multiclass_data(N, C, seed=6)
    sk_norm = None if normalize == "none" else normalize
    expected = sk_multiclass("confusion_matrix", target.numpy(), multiclass_labels(scores), C, normalize=sk_norm)
    check("multiclass", "confusion_matrix", scores, target, expected, C, normalize=normalize)


@pytest.mark.parametrize("weights", [None, "none", "linear", "quadratic"])
def test_multiclass_cohen_kappa_and_mcc(weights):
    scores, target = multiclass_data(N, C, seed=7)
    p = multiclass_labels(scores)
    sk_w = None if weights == "none" else weights
    check(
        "multiclass",
        "cohen_kappa",
        scores,
        target,
        sk_multiclass("cohen_kappa", target.numpy(), p, C, weights=sk_w),
        C,
        weights=weights,
    )
    check(
        "multiclass", "matthews_corrcoef", scores, target, sk_multiclass("matthews_corrcoef", target.numpy(), p, C), C
    )


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("average", AVERAGES)
def test_multiclass_top_k_accuracy_and_recall(average, k):
    scores, target = multiclass_data(N, C, seed=8)
    expected = sk_topk_accuracy(target.numpy(), scores.numpy(), C, k, average)
    check("multiclass", "accuracy", scores, target, expected, C, average=average, top_k=k)
    check("multiclass", "recall", scores, target, expected, C, average=average, top_k=k)
    top1 = ttf.multiclass_accuracy(scores, target, C, average=average)
    assert not torch.allclose(top1, ttf.multiclass_accuracy(scores, target, C, average=average, top_k=k))


def test_multiclass_top_k_needs_scores():
    scores, target = multiclass_data(20, C, seed=9)
    with pytest.raises(ValueError, match="preds: top_k = 2 needs float scores"):
        ttf.multiclass_accuracy(scores.argmax(1), target, C, top_k=2)


# -- multilabel -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["probs", "logits", "labels"])
@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("name", STAT_METRICS + ("stat_scores",))
def test_multilabel_vs_sklearn_and_torchmetrics(name, average, kind):
    preds, target = multilabel_data(N, L, seed=10, kind=kind)
    expected = sk_multilabel(name, target.numpy(), binary_labels(preds), average)
    check("multilabel", name, preds, target, expected, L, average=average)


@pytest.mark.parametrize("normalize", [None, "true", "pred", "all"])
def test_multilabel_confusion_matrix_and_mcc(normalize):
    preds, target = multilabel_data(N, L, seed=11, kind="logits")
    t, p = target.numpy(), binary_labels(preds)
    check(
        "multilabel",
        "confusion_matrix",
        preds,
        target,
        sk_multilabel("confusion_matrix", t, p, normalize=normalize),
        L,
        normalize=normalize,
    )
    check("multilabel", "matthews_corrcoef", preds, target, sk_multilabel("matthews_corrcoef", t, p), L)


# -- edge cases -------------------------------------------------------------------------------


@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("name", STAT_METRICS + ("stat_scores",))
def test_multiclass_class_never_present(name, average):
    """Class 4 occurs in neither target nor preds; class 3 only in preds (a false positive)."""
    scores, target = multiclass_data(N, C, seed=12)
    scores[:, 4] = -10.0
    target[target >= 3] = 0
    expected = sk_multiclass(name, target.numpy(), multiclass_labels(scores), C, average)
    check("multiclass", name, scores, target, expected, C, average=average)


@pytest.mark.parametrize("name", STAT_METRICS + ("stat_scores", "confusion_matrix", "cohen_kappa"))
@pytest.mark.parametrize("only", [0, 1])
def test_binary_all_one_class(name, only):
    preds, target = binary_data(60, seed=13)
    target = torch.full_like(target, only)
    check("binary", name, preds, target, sk_binary(name, target.numpy(), binary_labels(preds)))


@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("name", STAT_METRICS)
def test_multiclass_all_one_class(name, average):
    scores, _ = multiclass_data(60, C, seed=14)
    target = torch.zeros(60, dtype=torch.int64)
    check(
        "multiclass",
        name,
        scores,
        target,
        sk_multiclass(name, target.numpy(), multiclass_labels(scores), C, average),
        C,
        average=average,
    )


@pytest.mark.parametrize(
    "preds, target",
    [
        ([1, 1, 1, 1], [1, 1, 1, 1]),  # all right, one class: torchmetrics 1, scikit-learn 0
        ([0, 0, 0, 0], [1, 1, 1, 1]),  # all wrong: -1
        ([1, 1, 1, 1], [1, 0, 1, 1]),  # all predicted positive: torchmetrics' eps-smoothed value
        ([1, 0, 1, 1], [1, 1, 1, 1]),  # all targets positive
        ([0, 1, 0, 0], [0, 0, 0, 0]),  # no positive target
        ([0, 0, 0, 0], [0, 1, 0, 0]),  # all predicted negative
        ([1, 0, 1, 0], [1, 0, 0, 1]),
    ],
)
def test_matthews_degenerate_matrices_match_torchmetrics(preds, target):
    preds, target = torch.tensor(preds), torch.tensor(target)
    ours = ttf.binary_matthews_corrcoef(preds, target)
    torch.testing.assert_close(ours.double(), tmf.binary_matthews_corrcoef(preds, target).double(), **TOL)
    torch.testing.assert_close(ours, ttf.multiclass_matthews_corrcoef(preds, target, 2))
    ml_preds, ml_target = preds[:, None].expand(4, 2), target[:, None].expand(4, 2)  # pooled: counts doubled
    torch.testing.assert_close(
        ttf.multilabel_matthews_corrcoef(ml_preds, ml_target, 2).double(),
        tmf.multilabel_matthews_corrcoef(ml_preds, ml_target, 2).double(),
        **TOL,
    )


def test_matthews_multiclass_zero_variance_is_zero():
    target = torch.zeros(10, dtype=torch.int64)
    preds = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 0])
    assert float(ttf.multiclass_matthews_corrcoef(preds, target, 3)) == 0.0
    assert float(tmf.multiclass_matthews_corrcoef(preds, target, 3)) == 0.0


@pytest.mark.parametrize("ignore_index", [-1, 255])
@pytest.mark.parametrize("name", BINARY_NAMES)
def test_binary_ignore_index(name, ignore_index):
    preds, target = binary_data(N, seed=15)
    target[::7] = ignore_index
    keep = (target != ignore_index).numpy()
    expected = sk_binary(name, target.numpy()[keep], binary_labels(preds)[keep])
    check("binary", name, preds, target, expected, ignore_index=ignore_index)


@pytest.mark.parametrize("ignore_index", [0, 2, -100])
@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("name", STAT_METRICS + ("stat_scores",))
def test_multiclass_ignore_index(name, average, ignore_index):
    scores, target = multiclass_data(N, C, seed=16)
    if ignore_index < 0:  # out of range: marks samples; in range: the class's samples are dropped
        target[::5] = ignore_index
    keep = (target != ignore_index).numpy()
    p = multiclass_labels(scores)
    expected = sk_multiclass(name, target.numpy()[keep], p[keep], C, average, ignore_index=ignore_index)
    check("multiclass", name, scores, target, expected, C, average=average, ignore_index=ignore_index)


@pytest.mark.parametrize("name", ["confusion_matrix", "matthews_corrcoef", "cohen_kappa"])
def test_multiclass_ignore_index_whole_matrix(name):
    scores, target = multiclass_data(N, C, seed=17)
    keep = (target != 1).numpy()
    expected = sk_multiclass(name, target.numpy()[keep], multiclass_labels(scores)[keep], C)
    check("multiclass", name, scores, target, expected, C, ignore_index=1)


@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("name", STAT_METRICS + ("stat_scores", "matthews_corrcoef", "confusion_matrix"))
def test_multilabel_ignore_index_matches_torchmetrics(name, average):
    preds, target = multilabel_data(N, L, seed=18)
    target[torch.rand(target.shape, generator=torch.Generator().manual_seed(1)) < 0.2] = -1
    kw = {} if name in ("matthews_corrcoef", "confusion_matrix") else dict(average=average)
    ours = call(ttf, "multilabel", name, preds, target, L, ignore_index=-1, **kw)
    theirs = call(tmf, "multilabel", name, preds, target, L, ignore_index=-1, **kw)
    torch.testing.assert_close(ours.double(), theirs.double(), **TOL)


def test_multilabel_ignore_index_per_label_vs_sklearn():
    preds, target = multilabel_data(N, L, seed=19)
    target[::3, 1] = -1
    p, t = binary_labels(preds), target.numpy()
    expected = [sk_binary("precision", t[t[:, j] != -1, j], p[t[:, j] != -1, j]) for j in range(L)]
    out = ttf.multilabel_precision(preds, target, L, average=None, ignore_index=-1)
    torch.testing.assert_close(out.double(), torch.tensor(expected, dtype=torch.float64), **TOL)


def test_logits_and_probabilities_agree():
    logits, target = binary_data(N, seed=20, kind="logits")
    for threshold in (0.2, 0.5, 0.9):
        a = ttf.binary_stat_scores(logits, target, threshold=threshold)
        assert torch.equal(a, ttf.binary_stat_scores(logits.double().sigmoid(), target, threshold=threshold))
    ml, mt = multilabel_data(N, L, seed=21, kind="logits")
    assert torch.equal(
        ttf.multilabel_stat_scores(ml, mt, L, average=None),
        ttf.multilabel_stat_scores(ml.double().sigmoid(), mt, L, average=None),
    )
    scores, target = multiclass_data(N, C, seed=22)
    assert torch.equal(
        ttf.multiclass_confusion_matrix(scores, target, C),
        ttf.multiclass_confusion_matrix(scores.softmax(1), target, C),
    )


def test_logit_threshold_extremes():
    logits = torch.tensor([-200.0, -3.0, 0.0, 3.0, 200.0])
    target = torch.tensor([0, 0, 1, 1, 1])
    # threshold 0: every finite logit is > logit(0) = -inf; threshold 1: none is.
    assert ttf.binary_stat_scores(logits, target, threshold=0.0).tolist() == [3, 2, 0, 0, 3]
    assert ttf.binary_stat_scores(logits, target, threshold=1.0).tolist() == [0, 0, 2, 3, 3]


def test_float_preds_in_unit_interval_are_probabilities():
    """A batch whose floats all lie in [0, 1] is read as probabilities (torchmetrics' rule)."""
    preds, target = torch.tensor([0.0, 0.4, 0.6, 1.0]), torch.tensor([0, 1, 1, 1])
    assert ttf.binary_stat_scores(preds, target).tolist() == [2, 0, 1, 1, 3]


@pytest.mark.parametrize("name", ["accuracy", "f1_score", "confusion_matrix", "stat_scores"])
def test_extra_dims_are_flattened(name):
    g = torch.Generator().manual_seed(23)
    kw = {} if name == "confusion_matrix" else dict(average="macro")
    scores, target = torch.randn(40, C, 3, generator=g), torch.randint(0, C, (40, 3), generator=g)
    ours = call(ttf, "multiclass", name, scores, target, C, **kw)
    torch.testing.assert_close(ours.double(), call(tmf, "multiclass", name, scores, target, C, **kw).double(), **TOL)
    flat = call(ttf, "multiclass", name, scores.movedim(1, -1).reshape(-1, C), target.reshape(-1), C, **kw)
    torch.testing.assert_close(ours, flat)
    preds, target = torch.rand(40, L, 3, generator=g), torch.randint(0, 2, (40, L, 3), generator=g)
    ours = call(ttf, "multilabel", name, preds, target, L, **kw)
    torch.testing.assert_close(ours.double(), call(tmf, "multilabel", name, preds, target, L, **kw).double(), **TOL)
    preds, target = torch.rand(40, 3, generator=g), torch.randint(0, 2, (40, 3), generator=g)
    ours = call(ttf, "binary", name, preds, target)
    torch.testing.assert_close(ours.double(), call(tmf, "binary", name, preds, target).double(), **TOL)


@pytest.mark.parametrize("zero_division", [0, 1])
@pytest.mark.parametrize("name", ["precision", "recall", "f1_score", "fbeta_score", "jaccard_index"])
def test_zero_division(name, zero_division):
    """Class 2 is never predicted and never a target: its ratios are 0/0."""
    preds = torch.tensor([0, 1, 1, 0, 1, 0])
    target = torch.tensor([0, 1, 0, 0, 1, 1])
    for average in ("none", "macro", "micro"):
        ours = call(ttf, "multiclass", name, preds, target, 3, average=average, zero_division=zero_division)
        theirs = call(tmf, "multiclass", name, preds, target, 3, average=average, zero_division=zero_division)
        torch.testing.assert_close(ours.double(), theirs.double(), **TOL)
    out = call(ttf, "multiclass", name, preds, target, 3, average="none", zero_division=zero_division)
    assert float(out[2]) == zero_division
    empty = call(
        ttf,
        "binary",
        name,
        torch.zeros(3, dtype=torch.long),
        torch.zeros(3, dtype=torch.long),
        zero_division=zero_division,
    )
    assert float(empty) == zero_division


def test_empty_batch_gives_zero_counts():
    preds, target = torch.empty(0, C), torch.empty(0, dtype=torch.int64)
    assert ttf.multiclass_confusion_matrix(preds, target, C).sum() == 0
    assert float(ttf.multiclass_accuracy(preds, target, C)) == 0.0
    assert math.isnan(float(ttf.multiclass_cohen_kappa(preds, target, C)))


def test_accuracy_shortcuts_give_the_general_paths_bits():
    """MulticlassAccuracy's compute takes shortcuts from its confusion matrix for "micro" and
    "macro" (top_k = 1, at every step under a per-step sync): they must give the very bits of
    the general path, on matrices with classes absent from target, from preds or from both, an
    empty matrix, a single class and counts far past float32's integers."""
    from torchtally.functional.classification import compute as r

    g = torch.Generator().manual_seed(14)
    mats = [torch.zeros(4, 4, dtype=torch.int64), torch.tensor([[3]]), torch.tensor([[0, 2], [0, 0]])]
    for i in range(3000):
        c = 1 + i % 12
        high = 2**40 if i % 3 == 0 else 20
        m = torch.randint(0, high, (c, c), generator=g)
        m[torch.rand(c, generator=g) < 0.3] = 0  # classes never in target
        m[:, torch.rand(c, generator=g) < 0.3] = 0  # ... never predicted
        mats.append(m)
    for m in mats:
        stats = r.multiclass_stats(m)
        for shortcut, average in ((r.macro_accuracy, "macro"), (r.micro_accuracy, "micro")):
            got, want = shortcut(m), r.accuracy(stats, average)
            assert got.dtype == want.dtype == torch.float32 and got.shape == want.shape == ()
            assert torch.equal(got, want), (average, m, got.item(), want.item())


@pytest.mark.parametrize("average", ["micro", "macro", "weighted", "none"])
def test_multiclass_accuracy_class_matches_its_functional_form(average):
    """The class (with its shortcuts) and the functional form (the general path) agree."""
    from torchtally import MulticlassAccuracy

    preds, target = multiclass_data(N, C, seed=3)
    target[target == 2] = 0  # a class absent from target (still predicted: it counts for macro)
    metric = MulticlassAccuracy(C, average=average)
    for lo in range(0, N, 100):
        metric.update(preds[lo : lo + 100], target[lo : lo + 100])
    assert torch.equal(metric.compute(), ttf.multiclass_accuracy(preds, target, C, average=average))
