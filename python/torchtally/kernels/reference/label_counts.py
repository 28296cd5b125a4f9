"""Torch reference of the label-counts kernel (csrc/API.md, "Label counts"): per (sample, class),
the intersection and pixel counts of two index maps [N, P]."""

import torch

from . import checks as chk

_LABELS = "a bool or integer tensor [N, P]"


def label_counts(out, preds, target, from_scores, /) -> None:
    """out int64 [N, C, 3] = (|preds == c and target == c|, |preds == c|, |target == c|) per
    sample and class c, C = out.shape[1]. ``from_scores`` bit 0 (preds) / bit 1 (target): that side
    is the argmax of scores, -1 where a pixel's scores held a NaN."""
    from_scores = chk.index_value("from_scores", from_scores, allow_none=False)
    if not 0 <= from_scores <= 3:
        raise ValueError(f"from_scores: expected 0, 1, 2 or 3, got {from_scores}")
    chk.no_meta(("preds", preds), ("target", target))
    out = chk.tensor("out", out)
    preds = chk.labels("preds", preds, out, _LABELS, lambda s: len(s) == 2)
    target = chk.labels("target", target, out, _LABELS, lambda s: len(s) == 2)
    if target.shape != preds.shape:
        raise ValueError(f"target: expected the shape of preds ({chk.describe(preds)}), got {chk.describe(target)}")
    n = preds.shape[0]
    k = out.shape[1] if out.dim() == 3 else 1
    expected = f"an int64 tensor of shape [{n}, {k}, 3]"
    out = chk.output("out", out, torch.int64, expected, (3,))
    if tuple(out.shape) != (n, k, 3):
        chk.fail("out", out, expected, True)
    p, t = preds.long(), target.long()
    for name, x, scored in (("preds", p, from_scores & 1), ("target", t, from_scores & 2)):
        i = chk.first((x < 0) | (x >= k), None)
        if i is not None:
            sample, value = i // x.shape[1], int(x.reshape(-1)[i])
            if scored and value == -1:
                raise ValueError(f"{name}: NaN in the scores of sample {sample}")
            raise ValueError(f"{name}: sample {sample}: class index {value} is out of range [0, {k})")
    # one bincount per side over (sample, class) bins
    base = torch.arange(n, device=p.device).unsqueeze(1) * k
    bins = n * k

    def count(x: torch.Tensor) -> torch.Tensor:
        return torch.bincount((base + x).reshape(-1), minlength=bins).view(n, k)

    hit = torch.bincount((base + p)[p == t], minlength=bins).view(n, k)
    out.copy_(torch.stack((hit, count(p), count(t)), dim=-1))
