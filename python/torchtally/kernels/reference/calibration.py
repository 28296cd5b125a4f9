"""Torch reference of the calibration kernel (csrc/API.md, "Calibration bins").

Sample i falls in bin b = #{j : boundaries[j] <= conf[i]} - 1 (torch.bucketize with
right=True, minus one: a confidence equal to the last boundary gets the last bin of its own);
its bin's count grows by one, its confidence sum by conf[i] and its accuracy sum by hit[i].
"""

import torch

from . import checks as chk


def calibration_update(counts, sums, conf, hit, boundaries, /) -> None:
    """counts int64 [B] += samples per bin; sums float64 [B, 2] += (confidence, hit) per bin."""
    chk.no_meta(("conf", conf), ("hit", hit), ("boundaries", boundaries))
    counts = chk.output("counts", counts, torch.int64, "an int64 tensor of shape [B]", (1,))
    b = counts.shape[0]
    sums = chk.output("sums", sums, torch.float64, f"a float64 tensor of shape [B, 2] with B = {b}", (2,))
    if tuple(sums.shape) != (b, 2):
        chk.fail("sums", sums, f"a float64 tensor of shape [B, 2] with B = {b}", True)
    chk.same_device("sums", sums, counts)
    conf = chk.scores("conf", conf, counts, "a floating tensor of shape [N]", lambda s: len(s) == 1)
    n = conf.shape[0]
    hit = chk.labels("hit", hit, counts, f"an integer or bool tensor of shape [N] with N = {n}", lambda s: s == (n,))
    expected = f"a float64 tensor of shape [B] with B = {b} >= 1"
    boundaries = chk.scores("boundaries", boundaries, counts, expected, lambda s: s == (b,) and b >= 1)
    if boundaries.dtype != torch.float64:
        chk.fail("boundaries", boundaries, expected, False)
    if not bool(torch.isfinite(boundaries).all()) or (b > 1 and bool((boundaries[1:] < boundaries[:-1]).any())):
        raise ValueError("boundaries: expected finite, non-decreasing values")
    chk.no_nan("conf", conf)
    h = hit.long()
    i = chk.first((h < 0) | (h > 1), None)
    if i is not None:
        raise ValueError(f"hit: expected 0 or 1, got {int(h[i])} at index {i}")
    c = conf.double().contiguous()
    i = chk.first(c < boundaries[0], None)
    if i is not None:
        raise ValueError(f"conf: {float(c[i])} at index {i} lies below the first boundary {float(boundaries[0])}")
    bins = torch.bucketize(c, boundaries, right=True) - 1
    counts.add_(torch.bincount(bins, minlength=b))
    add = torch.zeros_like(sums)
    add[:, 0].index_add_(0, bins, c)
    add[:, 1].index_add_(0, bins, h.double())
    sums.add_(add)
