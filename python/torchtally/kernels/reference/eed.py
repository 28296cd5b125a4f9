"""Torch reference of the extended edit distance kernel (csrc/API_TEXT.md, "Extended edit
distance"): EED (Stanchev, Wang and Ney, WMT 2019) on character codes, as torchmetrics and the
authors' script compute it.

Per reference character, a row of a CDER-style alignment over the hypothesis' characters
(deletion ``deletion``, insertion or substitution ``insertion``/1, a jump of cost ``alpha`` to
any hypothesis position after a reference space), the position of each row's minimum counted
as a visit; the score is ``min(1, (distance + rho * coverage) / (len(ref) + rho * coverage))``
with coverage the sum over hypothesis positions of |visits - 1|-like counts (one for a position
never visited). Per sentence: the lowest score over its references. A 0 / 0 score (an empty
reference and hypothesis with ``rho`` 0) is 0, and n / 0 is 1. Float64, plain Python loops.
"""

import torch

from . import checks as chk
from .packed_text import unpack

SPACE = 32  # the code of " ": a jump may follow it


def pair_score(hyp, ref, alpha: float, rho: float, deletion: float, insertion: float) -> float:
    """EED of the character codes ``hyp`` against ``ref``."""
    n = len(hyp)
    visits = [-1] * (n + 1)
    row = [1.0] * (n + 1)
    row[0] = 0.0
    for c in ref:
        nxt = [row[0] + 1.0] + [0.0] * n
        for i in range(1, n + 1):
            nxt[i] = min(nxt[i - 1] + deletion, row[i - 1] + (0 if hyp[i - 1] == c else 1), row[i] + insertion)
        low = min(nxt)
        at = nxt.index(low)
        visits[at] += 1
        if c == SPACE:
            jump = alpha + low
            nxt = [min(x, jump) for x in nxt]
        row = nxt
    coverage = rho * sum(v if v >= 0 else 1 for v in visits)
    num, den = row[-1] + coverage, float(len(ref)) + coverage
    if den == 0.0:
        return 1.0 if num > 0 else 0.0
    return min(1.0, num / den)


def eed_sentences(out, hyp, hyp_offsets, refs, ref_offsets, groups, costs, /) -> None:
    """out float64 [N] = per sentence the lowest EED over its references; ``costs`` float64 [4]
    = (alpha, rho, deletion, insertion), finite and non-negative; the packed arguments as in
    ``packed_text``."""
    out, hyps, grouped = unpack(out, 0, hyp, hyp_offsets, refs, ref_offsets, groups)
    costs = chk.tensor("costs", costs)
    expected = "a float64 tensor of shape [4] (alpha, rho, deletion, insertion)"
    costs = chk.output("costs", costs, torch.float64, expected, (1,))
    if costs.shape[0] != 4:
        chk.fail("costs", costs, expected, True)
    values = [float(v) for v in costs.tolist()]
    if not all(v >= 0.0 and v != float("inf") for v in values):
        raise ValueError(f"costs: expected finite non-negative (alpha, rho, deletion, insertion), got {values}")
    scores = [min(pair_score(h, r, *values) for r in rs) for h, rs in zip(hyps, grouped)]
    for i, s in enumerate(scores):
        out[i] = s
