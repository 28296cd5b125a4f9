"""Torch reference of the mask-counts kernel (csrc/API.md, "Mask counts"): per (sample, class),
the intersection and pixel counts of two stacks of 0/1 masks [N, C, P]."""

import torch

from . import checks as chk

_MASKS = "a bool or integer tensor [N, C, P]"


def _first_bad(t: torch.Tensor) -> int:
    """The flat (sample, class) index of the first mask holding a value other than 0/1, or -1."""
    if t.dtype == torch.bool or t.numel() == 0:
        return -1
    bad = ((t != 0) & (t != 1)).any(dim=2).reshape(-1)
    i = chk.first(bad, None)
    return -1 if i is None else i


def mask_counts(out, preds, target, /) -> None:
    """out int64 [N, C, 3] = (|preds & target|, |preds|, |target|) per (sample, class)."""
    chk.no_meta(("preds", preds), ("target", target))
    out = chk.tensor("out", out)
    preds = chk.labels("preds", preds, out, _MASKS, lambda s: len(s) == 3)
    target = chk.labels("target", target, out, _MASKS, lambda s: len(s) == 3)
    if target.shape != preds.shape:
        raise ValueError(f"target: expected the shape of preds ({chk.describe(preds)}), got {chk.describe(target)}")
    n, k = preds.shape[:2]
    expected = f"an int64 tensor of shape [{n}, {k}, 3]"
    out = chk.output("out", out, torch.int64, expected, (3,))
    if tuple(out.shape) != (n, k, 3):
        chk.fail("out", out, expected, True)
    for name, t in (("preds", preds), ("target", target)):
        i = _first_bad(t)
        if i >= 0:
            raise ValueError(
                f"{name}: sample {i // k}, class {i % k}: expected a one-hot (0/1) mask per class, "
                "got values outside {0, 1}"
            )
    p, t = preds.long(), target.long()
    out.copy_(torch.stack(((p & t).sum(dim=2), p.sum(dim=2), t.sum(dim=2)), dim=-1))
