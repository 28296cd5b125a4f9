"""Torch reference of the Fleiss' kappa sums kernel (csrc/API.md, "rating_sums").

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
