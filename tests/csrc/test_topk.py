"""Top-k counts (C core and torch reference) against a numpy stable descending argsort.

Rank of class j = #{i : s_i > s_j} + #{i < j : s_i == s_j}, which is j's position in a stable
sort of -s (ties keep the lower class first; -0.0 and 0.0 are equal).
"""
import numpy as np
import pytest
import torch

from ._helpers import LABEL_DTYPES, LAYOUTS, N, SCORE_DTYPES, dtype_id, generator, labels, layout, np_values, scores, start_counts


def np_topk(s: np.ndarray, target: np.ndarray, k: int, classes: int, keep=None) -> torch.Tensor:
    if keep is not None:
        s, target = s[keep], target[keep]
    top = np.argsort(-s.astype(np.float64), axis=1, kind="stable")[:, :k]
    hit = (top == target[:, None]).any(axis=1)
    cols = [np.bincount(v, minlength=classes) for v in (top.ravel(), target[hit], target)]
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
