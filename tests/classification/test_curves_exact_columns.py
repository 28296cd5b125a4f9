"""The one-column forms of roc_rates and pr_curve (functional/curves/compute.py): an exact
column's rates with fewer torch ops, bit for bit the general [R, M] path's values."""

import pytest
import torch

from torchtally.functional.curves import compute
from torchtally.kernels import curves as curve_kernels


def _column(n: int, levels: int, positives: str, seed: int) -> compute.Counts:
    g = torch.Generator().manual_seed(seed)
    scores = (
        (torch.randint(0, levels, (n, 1), generator=g).float() / levels) if levels else torch.rand(n, 1, generator=g)
    )
    labels = torch.randint(0, 2, (n,), generator=g)
    if positives == "none":
        labels.zero_()
    elif positives == "all":
        labels.fill_(1)
    return compute.exact_counts(*curve_kernels.column_points(scores, labels.to(torch.uint8), 0, 0))


def _two_rows(c: compute.Counts) -> compute.Counts:
    """The same column twice: the general path (more than one row) computes it."""
    return compute.Counts(
        torch.cat([c.tp, c.tp]),
        torch.cat([c.fp, c.fp]),
        torch.cat([c.pos, c.pos]),
        torch.cat([c.neg, c.neg]),
        c.thresholds,
        True,
    )


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.view(torch.int64), b.view(torch.int64))


@pytest.mark.parametrize("n", [0, 1, 9, 500])
@pytest.mark.parametrize("levels", [0, 3])
@pytest.mark.parametrize("positives", ["some", "none", "all"])
def test_one_column_rates_equal_the_general_path(n, levels, positives):
    c = _column(n, levels, positives, seed=n + levels)
    general = _two_rows(c)
    fpr, tpr, t = compute.roc_rates(c)
    gfpr, gtpr, gt = compute.roc_rates(general)
    assert _same_bits(fpr[0], gfpr[0]) and _same_bits(tpr[0], gtpr[0]) and torch.equal(t, gt)
    for if_zero in (float("nan"), 1.0):
        p, r, pt = compute.pr_curve(c, if_zero)
        gp, gr, gpt = compute.pr_curve(general, if_zero)
        assert _same_bits(p[0], gp[0]) and _same_bits(r[0], gr[0]) and torch.equal(pt, gpt)
