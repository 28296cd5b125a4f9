"""Torch reference of the Lip Vertex Error kernel (csrc/API_MULTIMODAL.md, "lip_errors").

out float64 0-d += the sum over the first min(T, T') frames of each frame's largest squared
distance between the ``lips`` vertices of vertices_pred [T, V, C] and vertices_gt [T', V, C];
every check runs before out is written.
"""

import torch

from . import checks as chk

F64 = torch.float64


def lip_errors(out, vertices_pred, vertices_gt, lips, /) -> None:
    chk.no_meta(("vertices_pred", vertices_pred), ("vertices_gt", vertices_gt), ("lips", lips))
    out = chk.output("out", out, F64, "float64 []", (0,))
    pred = chk.scores("vertices_pred", vertices_pred, out, "floating vertices [T, V, C]", lambda s: len(s) == 3)
    gt = chk.scores("vertices_gt", vertices_gt, out, "floating vertices [T, V, C]", lambda s: len(s) == 3)
    lips = chk.labels("lips", lips, out, "an integer tensor of vertex indices [L]", lambda s: len(s) == 1)
    if gt.shape[1:] != pred.shape[1:]:
        raise ValueError(
            "vertices_gt: expected the vertex and coordinate dimensions of vertices_pred "
            f"({chk.describe(pred)}), got {chk.describe(gt)}"
        )
    v = pred.shape[1]
    index = lips.to(torch.int64)
    if index.numel() and (int(index.min()) < 0 or int(index.max()) >= v):
        bad = index[(index < 0) | (index >= v)][0]
        raise ValueError(f"lips: expected vertex indices in [0, {v}), got {int(bad)}")
    frames = min(pred.shape[0], gt.shape[0])
    if frames == 0 or index.numel() == 0:
        return
    a, b = (x[:frames].detach().index_select(1, index).to(F64) for x in (pred, gt))
    for name, x in (("vertices_pred", a), ("vertices_gt", b)):
        if not bool(torch.isfinite(x).all()):
            raise ValueError(f"{name}: expected finite values, got NaN or infinite values at the mouth_map vertices")
    out.add_((b - a).square().sum(-1).amax(1).sum())
