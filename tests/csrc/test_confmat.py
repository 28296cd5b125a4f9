"""Confusion-matrix kernels (C core and torch reference) against scikit-learn.

Every test starts from a non-zero `out` and checks the increment, so a kernel that overwrites
instead of accumulating fails.
"""

import numpy as np
import pytest
import torch
from sklearn.metrics import confusion_matrix, multilabel_confusion_matrix
from support.kernel_inputs import (
    LABEL_DTYPES,
    LAYOUTS,
    SCORE_DTYPES,
    N,
    dtype_id,
    generator,
    labels,
    layout,
    np_values,
    scores,
    start_counts,
)

# each label dtype once as preds and once as target
LABEL_PAIRS = [(d, LABEL_DTYPES[(i + 1) % len(LABEL_DTYPES)]) for i, d in enumerate(LABEL_DTYPES)]


def sk_confmat(target, preds, classes: int) -> torch.Tensor:
    if len(target) == 0:
        return torch.zeros(classes, classes, dtype=torch.int64)
    return torch.from_numpy(confusion_matrix(target, preds, labels=np.arange(classes)).astype(np.int64))


def accumulate(kernel, out, *args) -> torch.Tensor:
    before = out.clone()
    kernel(out, *args)
    return out - before


# ---- confmat_labels ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("pdtype,tdtype", LABEL_PAIRS, ids=[f"{dtype_id(a)}-{dtype_id(b)}" for a, b in LABEL_PAIRS])
def test_labels_match_sklearn(impl, pdtype, tdtype, kind):
    g = generator(1)
    classes = 2 if torch.bool in (pdtype, tdtype) else 7
    preds, target = labels((N,), classes, pdtype, g), labels((N,), classes, tdtype, g)
    out = start_counts((classes, classes), g)
    got = accumulate(impl.confmat_labels, out, layout(preds, kind), layout(target, kind), None, None)
    assert torch.equal(got, sk_confmat(np_values(target), np_values(preds), classes))


@pytest.mark.parametrize("dtype", [torch.int16, torch.int32, torch.int64])
def test_labels_many_classes(impl, dtype):
    g = generator(2)
    classes = 1500
    preds, target = labels((4000,), classes, dtype, g), labels((4000,), classes, dtype, g)
    out = start_counts((classes, classes), g)
    got = accumulate(impl.confmat_labels, out, preds, target, None, None)
    assert torch.equal(got, sk_confmat(np_values(target), np_values(preds), classes))


@pytest.mark.parametrize("mask_dtype", [None, torch.bool, torch.uint8])
@pytest.mark.parametrize("ignore_index", [None, 2, -100])
def test_labels_mask_and_ignore_index(impl, mask_dtype, ignore_index):
    """Masked and ignored samples are skipped before any range check."""
    g = generator(3)
    classes = 5
    preds, target = labels((N,), classes, torch.int64, g), labels((N,), classes, torch.int64, g)
    mask = torch.randint(0, 3, (N,), generator=g) > 0
    keep = mask.clone() if mask_dtype is not None else torch.ones(N, dtype=torch.bool)
    if ignore_index is not None:
        ignored = torch.rand(N, generator=g) < 0.2
        target[ignored] = ignore_index
        keep &= target != ignore_index
        preds[target == ignore_index] = 99  # out of range, but never looked at
    if mask_dtype is not None:
        preds[~mask], target[~mask] = -7, 1000
        mask = mask.to(mask_dtype) * 7 if mask_dtype == torch.uint8 else mask  # any non-zero keeps
    out = start_counts((classes, classes), g)
    got = accumulate(impl.confmat_labels, out, preds, target, mask if mask_dtype else None, ignore_index)
    assert torch.equal(got, sk_confmat(target[keep].numpy(), preds[keep].numpy(), classes))


@pytest.mark.parametrize("classes", [0, 3])
def test_labels_zero_samples(impl, classes):
    g = generator(4)
    out = start_counts((classes, classes), g)
    before = out.clone()
    empty = torch.zeros(0, dtype=torch.int64)
    impl.confmat_labels(out, empty, empty, torch.zeros(0, dtype=torch.bool), None)
    assert torch.equal(out, before)


def test_labels_expanded_inputs(impl):
    """Stride-0 inputs: one prediction broadcast to every sample."""
    g = generator(5)
    target = labels((N,), 4, torch.int32, g)
    preds = torch.tensor(2, dtype=torch.int8).expand(N)
    out = start_counts((4, 4), g)
    got = accumulate(impl.confmat_labels, out, preds, target, torch.tensor(True).expand(N), None)
    assert torch.equal(got, sk_confmat(target.numpy(), np.full(N, 2), 4))


# ---- confmat_scores ----------------------------------------------------------------------------


@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
def test_scores_match_sklearn_argmax(impl, dtype, kind, ties):
    """Prediction = argmax of the row, first index on ties (np.argmax's rule too)."""
    g = generator(6)
    classes = 6
    s = scores((N, classes), dtype, g, ties)
    target = labels((N,), classes, LABEL_DTYPES[1 + SCORE_DTYPES.index(dtype)], g)
    out = start_counts((classes, classes), g)
    got = accumulate(impl.confmat_scores, out, layout(s, kind), layout(target, kind), None, None)
    assert torch.equal(got, sk_confmat(np_values(target), np.argmax(np_values(s), axis=1), classes))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=dtype_id)
def test_scores_many_classes(impl, dtype):
    g = generator(7)
    classes = 1200
    s = scores((400, classes), dtype, g)
    target = labels((400,), classes, torch.int64, g)
    out = start_counts((classes, classes), g)
    got = accumulate(impl.confmat_scores, out, s, target, None, None)
    assert torch.equal(got, sk_confmat(target.numpy(), np.argmax(np_values(s), axis=1), classes))


def test_scores_mask_ignore_and_expanded_rows(impl):
    """One score row broadcast to all samples (stride 0), a uint8 mask and ignore_index."""
    g = generator(8)
    row = torch.tensor([[0.1, 0.7, 0.7, -2.0]])
    s = row.expand(N, 4)
    target = labels((N,), 4, torch.int64, g)
    target[::7] = -1
    mask = (torch.rand(N, generator=g) < 0.8).to(torch.uint8)
    out = start_counts((4, 4), g)
    got = accumulate(impl.confmat_scores, out, s, target, mask, -1)
    keep = (mask > 0) & (target != -1)
    assert torch.equal(got, sk_confmat(target[keep].numpy(), np.ones(int(keep.sum()), dtype=int), 4))


def test_scores_zero_samples(impl):
    g = generator(9)
    out = start_counts((3, 3), g)
    before = out.clone()
    impl.confmat_scores(out, torch.zeros(0, 3), torch.zeros(0, dtype=torch.int64), None, None)
    assert torch.equal(out, before)


# ---- confmat_threshold -------------------------------------------------------------------------

THRESHOLD_DTYPES = SCORE_DTYPES + LABEL_DTYPES


def threshold_inputs(dtype, rows, width, g):
    """preds (scores with many values exactly at 0.25, or 0/1 labels) and 0/1 targets."""
    shape = (rows,) if width is None else (rows, width)
    if dtype.is_floating_point:
        p = torch.rand(shape, generator=g, dtype=torch.float64)
        p[torch.rand(shape, generator=g) < 0.1] = 0.25  # exactly at the threshold: not positive
        p = p.to(dtype)
    else:
        p = labels(shape, 2, dtype, g)
    return p, labels(shape, 2, torch.uint8, g)


def sk_multilabel(target, preds) -> torch.Tensor:
    """[L, 2, 2] with [l, target, prediction], as out (a vector counts as one column)."""
    t, p = target.reshape(len(target), -1), preds.reshape(len(preds), -1)
    if len(t) == 0:
        return torch.zeros(t.shape[1], 2, 2, dtype=torch.int64)
    if t.shape[1] > 1:
        cm = multilabel_confusion_matrix(t, p)
    else:
        cm = confusion_matrix(t[:, 0], p[:, 0], labels=[0, 1])[None]
    return torch.from_numpy(cm.astype(np.int64))


@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("width", [None, 1, 5], ids=["binary", "L1", "L5"])
@pytest.mark.parametrize("dtype", THRESHOLD_DTYPES, ids=dtype_id)
def test_threshold_matches_sklearn(impl, dtype, width, kind):
    g = generator(10)
    preds, target = threshold_inputs(dtype, N, width, g)
    out = start_counts((2, 2) if width is None else (width, 2, 2), g)
    got = accumulate(impl.confmat_threshold, out, layout(preds, kind), layout(target, kind), None, None, 0.25)
    p = np_values(preds)
    predicted = (p.astype(np.float64) > 0.25) if dtype.is_floating_point else p
    assert torch.equal(got.view(-1, 2, 2), sk_multilabel(np_values(target), predicted.astype(np.int64)))


def test_threshold_binary_into_three_d_out(impl):
    """1-D preds also accept out [1, 2, 2]; a label preds ignores the threshold."""
    g = generator(11)
    preds, target = threshold_inputs(torch.int32, N, None, g)
    out = start_counts((1, 2, 2), g)
    got = accumulate(impl.confmat_threshold, out, preds, target, None, None, 100.0)
    assert torch.equal(got, sk_multilabel(target.numpy(), preds.numpy()))


@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
def test_threshold_compares_exactly(impl, dtype):
    """`preds > threshold` on the exact values: a threshold just below / at / just above a score
    (not representable in the score dtype) must not be rounded to the score's dtype."""
    values = torch.tensor([0.1, 0.3, 1.0, 3.7, -0.6], dtype=torch.float64).to(dtype)
    for v in values.double().tolist():
        for threshold, positive in ((np.nextafter(v, -np.inf), 1), (v, 0), (np.nextafter(v, np.inf), 0)):
            out = torch.zeros(2, 2, dtype=torch.int64)
            impl.confmat_threshold(
                out, torch.tensor([v], dtype=torch.float64).to(dtype), torch.tensor([1]), None, None, float(threshold)
            )
            assert out[1, positive] == 1, (v, threshold)


def test_threshold_multilabel_mask_per_row_ignore_per_element(impl):
    g = generator(12)
    preds, target = threshold_inputs(torch.float32, N, 3, g)
    target = target.long()
    target[torch.rand(N, 3, generator=g) < 0.2] = -1
    mask = torch.rand(N, generator=g) < 0.7
    preds[~mask] = float("inf")  # a masked row is not counted at all
    out = start_counts((3, 2, 2), g)
    got = accumulate(impl.confmat_threshold, out, preds, target, mask, -1, 0.25)
    want = torch.zeros(3, 2, 2, dtype=torch.int64)
    for col in range(3):
        keep = mask & (target[:, col] != -1)
        want[col] = sk_multilabel(target[keep, col].numpy(), (preds[keep, col] > 0.25).long().numpy())[0]
    assert torch.equal(got, want)


def test_threshold_zero_samples(impl):
    g = generator(13)
    out = start_counts((4, 2, 2), g)
    before = out.clone()
    impl.confmat_threshold(out, torch.zeros(0, 4), torch.zeros(0, 4, dtype=torch.int64), None, None, 0.5)
    assert torch.equal(out, before)
