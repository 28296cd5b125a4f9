"""Torch reference of the ranking kernel (csrc/API.md, "Ranking sums").

Per row of scores s [L] and labels y [L] (0 negative, 1 relevant, 2 ignored: its score taken
as below every other), with R = {j : y_j = 1}, C = {j : y_j != 0} and ge(j) = #{k : s_k >= s_j}:

* coverage = #{k : s_k >= min_{j in C} s_j}, 0 when C is empty (scikit-learn's coverage_error,
  an ignored label counting as one to cover, as torchmetrics scores it);
* ranking average precision = mean over j in R of #{k in R : s_k >= s_j} / ge(j), 1 when R is
  empty or holds every label (scikit-learn's label_ranking_average_precision_score);
* ranking loss = #{(j, k) : j in R, k not in R, s_k >= s_j} / (|R| (L - |R|)), 0 when R is empty
  or holds every label (scikit-learn's label_ranking_loss: a tie counts as a misordered pair).

The reference compares every pair of a row (rows in chunks); the C core sorts each row.
"""

import torch

from . import checks as chk

_PAIRS_PER_CHUNK = 1 << 22


def ranking_update(out, preds, target, /) -> None:
    """out float64 [3] += (coverage, ranking average precision, ranking loss) summed over rows."""
    chk.no_meta(("preds", preds), ("target", target))
    out = chk.output("out", out, torch.float64, "a float64 tensor of shape [3]", (1,))
    if out.shape[0] != 3:
        chk.fail("out", out, "a float64 tensor of shape [3]", True)
    preds = chk.scores("preds", preds, out, "a floating tensor of shape [N, L] with L >= 1", lambda s: len(s) == 2)
    shape = tuple(preds.shape)
    target = chk.labels(
        "target", target, out, f"an integer or bool tensor of shape {list(shape)}", lambda s: s == shape
    )
    chk.no_nan("preds", preds)
    y = target.long()
    i = chk.first((y < 0) | (y > 2), None)
    if i is not None:
        raise ValueError(
            f"target: expected 0, 1 or 2 (ignored), got {int(y.reshape(-1)[i])} at {chk.where_text(i, shape)}"
        )
    n, labels = shape
    if n == 0 or labels == 0:
        return
    s = preds.double().masked_fill(y == 2, float("-inf"))
    total = torch.zeros(3, dtype=torch.float64, device=out.device)
    step = max(1, _PAIRS_PER_CHUNK // (labels * labels))
    for start in range(0, n, step):
        total += _rows(s[start : start + step], y[start : start + step])
    out.add_(total)


def _rows(s, y):
    labels = s.shape[1]
    rel = y == 1
    cover = y != 0
    ge = s[:, None, :] >= s[:, :, None]  # ge[i, j, k]: s_k >= s_j
    above = ge.sum(2).double()
    above_rel = (ge & rel[:, None, :]).sum(2).double()
    nr = rel.sum(1)
    informative = (nr > 0) & (nr < labels)
    ratio = torch.where(rel, above_rel / above, 0.0).sum(1) / nr.clamp(min=1)
    lrap = torch.where(informative, ratio, 1.0)
    wrong = (ge & ~rel[:, None, :] & rel[:, :, None]).sum((1, 2)).double()
    loss = torch.where(informative, wrong / (nr * (labels - nr)).clamp(min=1).double(), 0.0)
    lowest = torch.where(cover, s, float("inf")).min(1).values
    coverage = torch.where(cover.any(1), (s >= lowest[:, None]).sum(1), 0)
    return torch.stack([coverage.double().sum(), lrap.double().sum(), loss.double().sum()])
