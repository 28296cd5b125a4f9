"""Torch reference of the class-argmax kernel (csrc/API.md, "Class argmax"): per pixel of score
maps [N, C, P], the class of the largest score, -1 where one of its scores is NaN."""

import torch

from . import checks as chk

_SCORES = "a floating tensor [N, C, P] with C >= 1"


def class_argmax(out, scores, /) -> None:
    """out int64 [N, P] = argmax over dim 1 of scores (the first index on ties), -1 at a NaN."""
    chk.no_meta(("scores", scores))
    out = chk.tensor("out", out)
    scores = chk.scores("scores", scores, out, _SCORES, lambda s: len(s) == 3 and s[1] >= 1)
    n, _, p = scores.shape
    expected = f"an int64 tensor of shape [{n}, {p}]"
    out = chk.output("out", out, torch.int64, expected, (2,))
    if tuple(out.shape) != (n, p):
        chk.fail("out", out, expected, True)
    out.copy_(scores.argmax(dim=1).masked_fill_(torch.isnan(scores).any(dim=1), -1))
