"""Top-k counts (C core and torch reference) against a numpy stable descending argsort.

Rank of class j = #{i : s_i > s_j} + #{i < j : s_i == s_j}, which is j's position in a stable
sort of -s (ties keep the lower class first; -0.0 and 0.0 are equal).
"""

import numpy as np
import pytest
import torch
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


def np_topk(s: np.ndarray, target: np.ndarray, k: int, classes: int, keep=None) -> torch.Tensor:
    if keep is not None:
        s, target = s[keep], target[keep]
    top = np.argsort(-s.astype(np.float64), axis=1, kind="stable")[:, :k]
    hit = (top == target[:, None]).any(axis=1)
    predicted = np.where(hit, target, top[:, 0])  # the target on a hit, else the best class
    cols = [np.bincount(v, minlength=classes) for v in (predicted, target[hit], target)]
    return torch.from_numpy(np.stack(cols, axis=1).astype(np.int64))


def run(kernel, s, target, mask, ignore_index, k, classes, g):
    out = start_counts((classes, 3), g)
    before = out.clone()
    kernel(out, s, target, mask, ignore_index, k)
    return out - before


@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("k", [1, 3, 6])
@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
def test_topk_matches_stable_argsort(impl, dtype, kind, k, ties):
    g = generator(50)
    classes = 6
    s = scores((N, classes), dtype, g, ties)
    target = labels((N,), classes, LABEL_DTYPES[2 + SCORE_DTYPES.index(dtype)], g)
    got = run(impl.topk_update, layout(s, kind), layout(target, kind), None, None, k, classes, g)
    assert torch.equal(got, np_topk(np_values(s), np_values(target), k, classes))


def test_topk_many_classes(impl):
    g = generator(51)
    classes = 1100
    s = scores((300, classes), torch.float16, g)  # float16 also makes accidental ties
    target = labels((300,), classes, torch.int64, g)
    got = run(impl.topk_update, s, target, None, None, 5, classes, g)
    assert torch.equal(got, np_topk(np_values(s), target.numpy(), 5, classes))


def test_topk_mask_ignore_and_expanded_rows(impl):
    g = generator(52)
    s = torch.tensor([[0.5, 2.0, 2.0, -1.0, 0.5]]).expand(N, 5)
    target = labels((N,), 5, torch.int64, g)
    target[::4] = -100
    mask = torch.rand(N, generator=g) < 0.6
    target[~mask] = 12  # out of range, but masked
    got = run(impl.topk_update, s, target, mask, -100, 3, 5, g)
    keep = (mask & (target != -100)).numpy()
    assert torch.equal(got, np_topk(s.numpy(), target.numpy(), 3, 5, keep))


def test_topk_zero_samples(impl):
    g = generator(53)
    got = run(impl.topk_update, torch.zeros(0, 4), torch.zeros(0, dtype=torch.uint8), None, None, 2, 4, g)
    assert not got.any()


# The C core ranks rows of up to 32 classes from their pairs, four rows at a time in vector lanes
# (wider rows take another path): class counts around that boundary, k at both ends, N not a
# multiple of 4 and beyond one chunk (1024 rows), so partial groups and chunk edges are hit.
@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("k_of", ["1", "half", "all"])
@pytest.mark.parametrize("classes", [1, 2, 3, 31, 32, 33])
@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
def test_topk_class_counts_around_the_pairwise_limit(impl, dtype, classes, k_of, ties):
    g = generator(54)
    k = {"1": 1, "half": (classes + 1) // 2, "all": classes}[k_of]
    s = scores((1027, classes), dtype, g, ties)
    target = labels((1027,), classes, torch.int64, g)
    got = run(impl.topk_update, layout(s, "sliced"), target, None, None, k, classes, g)
    assert torch.equal(got, np_topk(np_values(s), target.numpy(), k, classes))


def test_topk_float64_ranks_in_double(impl):
    """Scores that are distinct in float64 but equal once rounded to float32 rank as float64."""
    g = generator(55)
    classes = 10
    steps = torch.stack([torch.randperm(classes, generator=g) for _ in range(999)])
    s = 1.0 + steps.double() * 2.0**-40  # distinct doubles, one float32 value
    target = labels((999,), classes, torch.int64, g)
    want = np_topk(s.numpy(), target.numpy(), 3, classes)
    assert not torch.equal(want, np_topk(s.float().numpy(), target.numpy(), 3, classes))
    got = run(impl.topk_update, s, target, None, None, 3, classes, g)
    assert torch.equal(got, want)


@pytest.mark.parametrize("value", [0.0, float("inf"), -float("inf")], ids=str)
def test_topk_all_equal_rows_take_the_lowest_classes(impl, value):
    g = generator(56)
    classes, k, n = 10, 4, 1027
    s = torch.full((n, classes), value)
    if value == 0:  # -0.0 and 0.0 are one value
        s[torch.rand(n, classes, generator=g) < 0.5] = -0.0
    target = labels((n,), classes, torch.int64, g)
    got = run(impl.topk_update, s, target, None, None, k, classes, g)
    first_k = torch.arange(classes) < k
    support = torch.bincount(target, minlength=classes)
    hits = torch.where(first_k, support, 0)
    predicted = hits.clone()
    predicted[0] += n - int(hits.sum())  # a miss predicts the best class, class 0
    assert torch.equal(got[:, 0], predicted)
    assert torch.equal(got[:, 1], hits)
    assert torch.equal(got[:, 2], support)


@pytest.mark.parametrize("bad", [0, 1, 2, 3, 5, 1022, 1023, 1024, 1026])
@pytest.mark.parametrize("what", ["nan", "nan-in-masked-row", "label", "label-then-nan"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=dtype_id)
def test_topk_bad_row_at_any_lane_leaves_out_unchanged(impl, dtype, what, bad):
    """A bad row anywhere in a group of four rows, or at a chunk edge: the rows before it are
    uncounted again, and the message names that row."""
    g = generator(57)
    classes, n = 10, 1027
    s = scores((n, classes), dtype, g)
    target = labels((n,), classes, torch.int64, g)
    mask = torch.rand(n, generator=g) < 0.7
    mask[bad] = what != "nan-in-masked-row"
    if what.startswith("nan"):
        s[bad, 4] = float("nan")
        expected = f"sample {bad}"
    else:
        target[bad] = classes + 3
        expected = f"label {classes + 3} at index {bad}"
        if what == "label-then-nan" and bad + 1 < n:
            s[bad + 1, 0] = float("nan")  # a later NaN does not change which row is reported
    out = start_counts((classes, 3), g)
    before = out.clone()
    with pytest.raises(ValueError, match=expected):
        impl.topk_update(out, s, target, mask, None, 3)
    assert torch.equal(out, before)
