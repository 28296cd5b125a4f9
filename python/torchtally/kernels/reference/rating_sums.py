"""Torch reference of the Fleiss' kappa kernels (csrc/API_NOMINAL.md, "rating_sums", "rating_update").

out int64 [C + 3] = (ratings per category [C], sum of squared counts, least and largest number
of ratings of a sample) of integer counts [N, C] >= 0; every check runs before out is written.
"""

import torch

from . import checks as chk

I64 = torch.int64
LIMIT = 2**63


def rating_sums(out, ratings, /) -> None:
    chk.no_meta(("ratings", ratings))
    out = chk.tensor("out", out)
    ratings = chk.labels("ratings", ratings, out, "an integer or bool tensor of labels [N, C]", lambda s: len(s) == 2)
    c = ratings.shape[1]
    out = chk.output("out", out, I64, f"int64 [{c + 3}]", (1,))
    if out.numel() != c + 3:
        raise ValueError(f"out: expected int64 [{c + 3}], got {chk.describe(out)}")
    counts = ratings.to(I64)
    if counts.numel() and bool((counts < 0).any()):
        i, j = (counts < 0).nonzero()[0].tolist()
        raise ValueError(f"ratings: expected counts >= 0, got {int(counts[i, j])} at [{i}, {j}]")
    # the sums are exact in float64 below 2^53; near int64's limit Python ints decide
    if counts.numel() and float(counts.double().pow(2).sum()) >= 2.0**62:
        if sum(v * v for v in counts.reshape(-1).tolist()) >= LIMIT or any(
            sum(col) >= LIMIT for col in counts.t().tolist()
        ):
            raise ValueError("ratings: expected counts whose sums fit int64")
    per_sample = counts.sum(1)
    least = int(per_sample.min()) if counts.shape[0] else LIMIT - 1
    most = int(per_sample.max()) if counts.shape[0] else -LIMIT
    tail = torch.tensor([int((counts * counts).sum()), least, most], dtype=I64, device=out.device)
    out.copy_(torch.cat((counts.sum(0), tail)))


def rating_update(totals, sums, bounds, ratings, /) -> None:
    """FleissKappa's update (csrc/API_NOMINAL.md, "rating_update"): the batch's sums added into
    totals [C] and sums [2] = (samples, sum of squared counts); bounds [4] = (largest R, -least R,
    largest C, -least C) set by the first batch, checked against by the later ones."""
    chk.no_meta(("ratings", ratings))
    sums = chk.output("sums", chk.tensor("sums", sums), I64, "int64 [2]", (1,))
    if sums.numel() != 2:
        raise ValueError(f"sums: expected int64 [2], got {chk.describe(sums)}")
    bounds = chk.output("bounds", chk.tensor("bounds", bounds), I64, "int64 [4]", (1,))
    if bounds.numel() != 4:
        raise ValueError(f"bounds: expected int64 [4], got {chk.describe(bounds)}")
    ratings = chk.labels("ratings", ratings, sums, "an integer or bool tensor of labels [N, C]", lambda s: len(s) == 2)
    n, c = ratings.shape
    if n == 0:
        return
    batch = torch.empty(c + 3, dtype=I64, device=sums.device)
    rating_sums(batch, ratings)
    least, most = int(batch[c + 1]), int(batch[c + 2])
    if least != most:
        per_sample = ratings.to(I64).sum(1)
        first = int(per_sample[0])
        at = int((per_sample != first).nonzero()[0, 0])
        raise ValueError(
            "ratings: every sample must have the same number of ratings (Fleiss' kappa), "
            f"got {first} for sample 0 and {int(per_sample[at])} for sample {at}"
        )
    max_r, _, max_c, _ = bounds.tolist()
    held = max_r != -LIMIT
    if held and (least != max_r or c != max_c):
        raise ValueError(
            f"ratings: expected {max_c} categories and {max_r} raters per sample (as the batches "
            f"before), got {c} and {least}"
        )
    totals = chk.output("totals", chk.tensor("totals", totals), I64, f"int64 [{c}]", (1,))
    if totals.numel() != c:
        raise ValueError(f"totals: expected int64 [{c}], got {chk.describe(totals)}")
    new_totals = [a + b for a, b in zip(totals.tolist(), batch[:c].tolist())]
    new_sums = [sums.tolist()[0] + n, sums.tolist()[1] + int(batch[c])]
    if any(v >= LIMIT for v in new_totals + new_sums):
        raise ValueError("ratings: expected counts whose sums with the states fit int64")
    totals.add_(batch[:c])
    sums.add_(torch.tensor([n, int(batch[c])], dtype=I64, device=sums.device))
    if not held:
        bounds.copy_(torch.tensor([least, -least, c, -c], dtype=I64, device=bounds.device))
