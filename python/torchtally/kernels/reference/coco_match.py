"""Torch reference of the COCO matching kernel (csrc/API.md, "COCO matching").

Per (image, label) group, detections in rank order are matched greedily to the ground truths as
pycocotools' COCOeval.evaluateImg matches them, at every IoU threshold t and in each of COCO's
area ranges a (all, small, medium, large): ground truths ignored in the range (crowd, or area
outside it) are tried last (a stable partition); a detection takes the ground truth of highest
IoU >= min(t, 1 - 1e-10) not yet taken (a crowd may be taken again), preferring any not-ignored
one to every ignored one. The outcome (0 false positive, 1 true positive, 2 ignored: matched to
an ignored ground truth, or unmatched with its area outside the range) is the base-3 digit
(t % 10) * 4 + a of word t // 10, the words written to columns 2.. of `rows` as (low, high)
int32 pairs. Written plainly, loop by loop: it is the oracle of the C core, and the path of a
`rows` tensor that is not on the CPU.
"""

import math
from typing import List, Optional

import torch
from torch import Tensor

from . import checks as chk

AREA_RANGES = ((0.0, 1e10), (0.0, 1024.0), (1024.0, 9216.0), (9216.0, 1e10))


def box_ious(det: Tensor, gt: Tensor) -> Tensor:
    """float64 [D, G]: pycocotools' bbIou of the (x, y, w, h) boxes; over the detection's area
    where the ground truth is a crowd (gt column 5), 0 where the boxes do not overlap."""
    d, g = det[:, None, :].double(), gt[None, :, :].double()
    w = torch.minimum(d[..., 2] + d[..., 0], g[..., 2] + g[..., 0]) - torch.maximum(d[..., 0], g[..., 0])
    h = torch.minimum(d[..., 3] + d[..., 1], g[..., 3] + g[..., 1]) - torch.maximum(d[..., 1], g[..., 1])
    da = d[..., 2] * d[..., 3]
    ga = g[..., 2] * g[..., 3]
    inter = w * h
    union = torch.where(g[..., 5] != 0, da, da + ga - inter)
    iou = inter / union
    return torch.where((w > 0) & (h > 0), iou, torch.zeros_like(iou))


def _match_group(iou: List[List[float]], det_area: List[float], gt_area: List[float], crowd: List[bool], thr):
    """outcomes [D][T][4] of one group."""
    nd, ng = len(det_area), len(gt_area)
    out = [[[0] * 4 for _ in thr] for _ in range(nd)]
    for a, (lo, hi) in enumerate(AREA_RANGES):
        ig = [crowd[j] or gt_area[j] < lo or gt_area[j] > hi for j in range(ng)]
        order = [j for j in range(ng) if not ig[j]] + [j for j in range(ng) if ig[j]]
        for ti, t in enumerate(thr):
            taken = [False] * ng
            for d in range(nd):
                best, m = min(t, 1 - 1e-10), -1
                for pos, j in enumerate(order):
                    if taken[pos] and not crowd[j]:
                        continue
                    if m >= 0 and not ig[order[m]] and ig[j]:
                        break
                    if iou[d][j] < best:
                        continue
                    best, m = iou[d][j], pos
                if m < 0:
                    out[d][ti][a] = 2 if (det_area[d] < lo or det_area[d] > hi) else 0
                else:
                    taken[m] = True
                    out[d][ti][a] = 2 if ig[order[m]] else 1
    return out


def coco_match(rows, groups, dets, gts, iou_thresholds, ious, /) -> None:
    """rows int32 [D, 2 + 2W]: columns 2.. get the packed outcome words (csrc/API.md)."""
    chk.no_meta(("groups", groups), ("dets", dets), ("gts", gts), ("iou_thresholds", iou_thresholds), ("ious", ious))
    thr = chk.output("iou_thresholds", iou_thresholds, torch.float64, "float64 [T] with T >= 1", (1,))
    if thr.shape[0] < 1:
        chk.fail("iou_thresholds", thr, "float64 [T] with T >= 1", True)
    t_count = thr.shape[0]
    w_count = math.ceil(t_count / 10)
    expected_rows = f"int32 [D, {2 + 2 * w_count}]"
    rows = chk.output("rows", rows, torch.int32, expected_rows, (2,))
    if rows.shape[1] != 2 + 2 * w_count:
        chk.fail("rows", rows, expected_rows, True)
    n_det = rows.shape[0]
    dets = chk.output("dets", dets, torch.float64, f"float64 [{n_det}, 5]", (2,))
    if tuple(dets.shape) != (n_det, 5):
        chk.fail("dets", dets, f"float64 [{n_det}, 5]", True)
    gts = chk.output("gts", gts, torch.float64, "float64 [G, 6]", (2,))
    if gts.shape[1] != 6:
        chk.fail("gts", gts, "float64 [G, 6]", True)
    groups = chk.output("groups", groups, torch.int64, "int64 [P, 4]", (2,))
    if groups.shape[1] != 4:
        chk.fail("groups", groups, "int64 [P, 4]", True)
    for name, t in (("groups", groups), ("dets", dets), ("gts", gts), ("iou_thresholds", thr)):
        chk.same_device(name, t, rows)
    if not bool(torch.isfinite(thr).all()):
        raise ValueError("iou_thresholds: expected finite values")
    if not bool(torch.isfinite(dets).all()):
        raise ValueError("dets: expected finite values")
    if not bool(torch.isfinite(gts[:, :5]).all()):
        raise ValueError("gts: expected finite values")
    if not bool(((gts[:, 5] == 0) | (gts[:, 5] == 1)).all()):
        raise ValueError("gts: expected crowd 0 or 1 in column 5")
    g = groups.cpu().tolist()
    d_at = g_at = pairs = 0
    for p, (d0, d1, g0, g1) in enumerate(g):
        if d0 != d_at or d1 < d0 or d1 > n_det or g0 != g_at or g1 < g0 or g1 > gts.shape[0]:
            raise ValueError(f"groups: row {p}: expected ranges that continue the previous group's, got {g[p]}")
        d_at, g_at, pairs = d1, g1, pairs + (d1 - d0) * (g1 - g0)
    if d_at != n_det or g_at != gts.shape[0]:
        raise ValueError(f"groups: expected ranges covering {n_det} detections and {gts.shape[0]} ground truths")
    if ious is not None:
        ious = chk.output("ious", ious, torch.float64, f"float64 [{pairs}]", (1,))
        if ious.shape[0] != pairs:
            chk.fail("ious", ious, f"float64 [{pairs}]", True)
        chk.same_device("ious", ious, rows)
        if not bool(((ious >= 0) & (ious <= 1)).all()):
            raise ValueError("ious: expected values in [0, 1]")
    words = _words(g, dets.cpu(), gts.cpu(), thr.cpu().tolist(), None if ious is None else ious.cpu(), w_count)
    rows[:, 2:] = words.view(torch.int32).reshape(n_det, 2 * w_count).to(rows.device)


def _words(groups, dets: Tensor, gts: Tensor, thr: List[float], ious: Optional[Tensor], w_count: int) -> Tensor:
    out = torch.zeros(dets.shape[0], w_count, dtype=torch.int64)
    at = 0
    for d0, d1, g0, g1 in groups:
        nd, ng = d1 - d0, g1 - g0
        if nd == 0:
            continue
        if ious is not None:
            block = ious[at : at + nd * ng].reshape(nd, ng)
            at += nd * ng
        else:
            block = box_ious(dets[d0:d1], gts[g0:g1])
        outcomes = _match_group(
            block.tolist(), dets[d0:d1, 4].tolist(), gts[g0:g1, 4].tolist(), (gts[g0:g1, 5] != 0).tolist(), thr
        )
        for d in range(nd):
            ws = [0] * w_count
            for ti in range(len(thr)):
                for a in range(4):
                    ws[ti // 10] += outcomes[d][ti][a] * 3 ** ((ti % 10) * 4 + a)
            out[d0 + d] = torch.tensor([w - (1 << 64) if w >= 1 << 63 else w for w in ws], dtype=torch.int64)
    return out
