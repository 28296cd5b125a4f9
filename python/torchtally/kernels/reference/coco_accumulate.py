"""Torch reference of the COCO accumulate kernel (csrc/API.md, "COCO accumulate").

pycocotools' ``COCOeval.accumulate`` over MeanAveragePrecision's rows. Per label k, its
detection rows sorted stably by score, descending (pycocotools' mergesort of the images'
detections, concatenated in image order); per maxDets level m the rows of level <= m; per IoU
threshold t and area range a, with o the outcomes (0 false positive, 1 true positive, 2 ignored)
and npig the label's ground truths counted in range a:

* tp, fp = cumulative counts of o == 1, o == 0 (float64); rc = tp / npig;
  pr = tp / (fp + tp + eps) with eps = numpy.spacing(1), then pr[i] = max(pr[i:]);
* recall[t, k, a*M + m] = rc[-1] (0 without detections);
* for each recall threshold r, i = searchsorted(rc, r, side='left'): precision = pr[i] and
  scores = the score there, until the first r with i past the end; from there on, 0;
* every (k, a) with npig == 0 stays -1.

Plain torch ops, vectorised over (t, a) per (label, level); the C core walks the same curves.
"""

import torch
from torch import Tensor

from . import checks as chk

AREAS = 4
_EPS = float(torch.finfo(torch.float64).eps)  # numpy.spacing(1)


def decode_outcomes(detections: Tensor, iou_count: int) -> Tensor:
    """uint8 [N, T, 4]: the base-3 outcome digits of the rows' packed words (csrc/API.md)."""
    n = detections.shape[0]
    words = (iou_count + 9) // 10
    mask = 0xFFFFFFFF
    low = detections[:, 2 : 2 + 2 * words : 2].long() & mask
    high = detections[:, 3 : 3 + 2 * words : 2].long() & mask
    digits = []
    for _ in range(40):  # divide the 64-bit word (high, low) by 3, one 32-bit half at a time
        rem = (high % 3) * (1 << 32) + low
        high = high // 3
        low = rem // 3
        digits.append(rem % 3)
    d = torch.stack(digits, 2).reshape(n, words * 10, AREAS)  # digit (t % 10) * 4 + a of word t // 10
    return d[:, :iou_count].to(torch.uint8)


def coco_accumulate(precision, recall, scores, detections, groundtruths, labels, rec_thresholds, /) -> None:
    """precision, scores float64 [T, R, K, 4*M] and recall float64 [T, K, 4*M], wholly written."""
    chk.no_meta(("detections", detections), ("groundtruths", groundtruths), ("labels", labels))
    for name, t in (("precision", precision), ("recall", recall), ("scores", scores)):
        t = chk.tensor(name, t)
        if t.dtype != torch.float64:
            raise TypeError(f"{name}: expected a float64 tensor, got {chk.describe(t)}")
    if precision.dim() != 4 or precision.shape[3] % AREAS or precision.shape[3] == 0:
        raise ValueError(f"precision: expected float64 [T, R, K, 4*M] with M >= 1, got {chk.describe(precision)}")
    t_count, r_count, k_count, am = precision.shape
    m_count = am // AREAS
    if tuple(scores.shape) != tuple(precision.shape):
        raise ValueError(f"scores: expected the shape of precision, got {chk.describe(scores)}")
    if tuple(recall.shape) != (t_count, k_count, am):
        raise ValueError(f"recall: expected float64 [{t_count}, {k_count}, {am}], got {chk.describe(recall)}")
    words = (t_count + 9) // 10
    detections = chk.tensor("detections", detections)
    if detections.dtype != torch.int32:
        raise TypeError(f"detections: expected int32 [N, {2 + 2 * words}], got {chk.describe(detections)}")
    if detections.dim() != 2 or detections.shape[1] != 2 + 2 * words:
        raise ValueError(f"detections: expected int32 [N, {2 + 2 * words}], got {chk.describe(detections)}")
    groundtruths = chk.tensor("groundtruths", groundtruths)
    if groundtruths.dtype != torch.int32:
        raise TypeError(f"groundtruths: expected int32 [G, 2], got {chk.describe(groundtruths)}")
    if groundtruths.dim() != 2 or groundtruths.shape[1] != 2:
        raise ValueError(f"groundtruths: expected int32 [G, 2], got {chk.describe(groundtruths)}")
    labels = chk.tensor("labels", labels)
    if labels.dtype != torch.int64 or labels.dim() != 1 or labels.shape[0] != k_count:
        err = TypeError if labels.dtype != torch.int64 else ValueError
        raise err(f"labels: expected int64 [{k_count}] (K of precision), got {chk.describe(labels)}")
    if k_count > 1 and bool((labels[1:] <= labels[:-1]).any()):
        raise ValueError("labels: expected strictly ascending labels")
    rec_thresholds = chk.tensor("rec_thresholds", rec_thresholds)
    if rec_thresholds.dtype != torch.float64 or tuple(rec_thresholds.shape) != (r_count,):
        err = TypeError if rec_thresholds.dtype != torch.float64 else ValueError
        raise err(f"rec_thresholds: expected float64 [{r_count}] (R of precision), got {chk.describe(rec_thresholds)}")

    dev = precision.device
    det = detections.to(dev)
    packed = det[:, 1].long() & 0xFFFFFFFF
    det_label, level = packed & 0xFFFFFF, packed >> 24
    det_k = _label_index(labels.to(dev), det_label, "detections")
    if det.shape[0] and int(level.max()) >= m_count:
        row = int((level >= m_count).nonzero()[0])
        raise ValueError(f"detections: row {row}: maxDets level {int(level[row])}, expected below M = {m_count}")
    gt = groundtruths.to(dev)
    gt_k = _label_index(labels.to(dev), gt[:, 0].long(), "groundtruths")
    bits = torch.stack([(gt[:, 1].long() >> a) & 1 for a in range(AREAS)], 1)
    npig = torch.zeros(k_count, AREAS, dtype=torch.int64, device=dev).index_add_(0, gt_k, bits)

    score = det[:, 0].contiguous().view(torch.float32)
    order = torch.sort(score, descending=True, stable=True).indices
    order = order[torch.sort(det_k[order], stable=True).indices]
    outcome = decode_outcomes(det[order], t_count)  # [N, T, 4]
    score, det_k, level = score[order].double(), det_k[order], level[order]

    p_out = torch.full_like(precision, -1.0)
    s_out = torch.full_like(scores, -1.0)
    r_out = torch.full_like(recall, -1.0)
    thr = rec_thresholds.to(dev)
    for k in range(k_count):
        rows = (det_k == k).nonzero().flatten()
        for m in range(m_count):
            kept = rows[level[rows] <= m]
            p, r, s = _curves(outcome[kept], score[kept], npig[k], thr)  # [T, R, 4], [T, 4], [T, R, 4]
            for a in range(AREAS):
                if int(npig[k, a]) == 0:
                    continue
                col = a * m_count + m
                p_out[:, :, k, col] = p[:, :, a]
                s_out[:, :, k, col] = s[:, :, a]
                r_out[:, k, col] = r[:, a]
    precision.copy_(p_out)
    scores.copy_(s_out)
    recall.copy_(r_out)


def _label_index(labels: Tensor, values: Tensor, name: str) -> Tensor:
    k = torch.searchsorted(labels, values).clamp(max=max(labels.shape[0] - 1, 0))
    bad = (labels[k] != values) if labels.shape[0] else torch.ones_like(values, dtype=torch.bool)
    if values.shape[0] and bool(bad.any()):
        row = int(bad.nonzero()[0])
        raise ValueError(f"{name}: row {row}: label {int(values[row])} is not in labels")
    return k


def _curves(outcome: Tensor, score: Tensor, npig: Tensor, thr: Tensor):
    """One (label, level): precision [T, R, 4], recall [T, 4], scores [T, R, 4]."""
    nd, t_count = outcome.shape[0], outcome.shape[1]
    r_count = thr.shape[0]
    dev = thr.device
    if nd == 0:
        zeros = torch.zeros(t_count, r_count, AREAS, dtype=torch.float64, device=dev)
        return zeros, torch.zeros(t_count, AREAS, dtype=torch.float64, device=dev), zeros.clone()
    tp = (outcome == 1).long().cumsum(0).double().permute(1, 2, 0)  # [T, 4, n]
    fp = (outcome == 0).long().cumsum(0).double().permute(1, 2, 0)
    rc = tp / npig.double().clamp(min=1)[None, :, None]
    pr = tp / (fp + tp + _EPS)
    pr = pr.flip(-1).cummax(-1).values.flip(-1)
    at = torch.searchsorted(rc.contiguous(), thr.expand(t_count, AREAS, r_count).contiguous(), right=False)
    inside = (at < nd).long().cumprod(-1).bool()  # pycocotools stops at the first threshold past the curve
    at = at.clamp(max=nd - 1)
    p = torch.where(inside, torch.gather(pr, 2, at), 0.0)
    s = torch.where(inside, score[at], 0.0)
    return p.permute(0, 2, 1), rc[:, :, -1], s.permute(0, 2, 1)
