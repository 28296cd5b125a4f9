"""Torch reference of the panoptic segment-matching kernel (csrc/API.md, "Panoptic segment matching").

Every image's pixels are keyed by (image, category slot, instance) on each side (slot -1: void,
an unknown category; a stuff's instance counts as 0), the segments found with torch.unique, and
the intersections with torch.unique over (pred segment, target segment). All images at once,
with no Python loop over pixels or segments, so it serves any device.
"""

from typing import Tuple

import torch
from torch import Tensor

from . import checks as chk

_THING, _STUFF, _MODIFIED_STUFF = 0, 1, 2
_PACK_LIMIT = 2**62  # keys packed into one int64 below this; unique over rows above
_NAMES = ("iou_sum", "true_positives", "false_positives", "false_negatives")
_MAP_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _check(outs: Tuple[Tensor, ...], preds: object, target: object, categories: object) -> Tuple[Tensor, Tensor]:
    chk.no_meta(("preds", preds), ("target", target), ("categories", categories))
    cats = chk.tensor("categories", categories)
    expected = "int64 [C, 2] with C >= 1"
    if cats.dtype != torch.int64:
        chk.fail("categories", cats, expected, False)
    if cats.dim() != 2 or cats.shape[1] != 2 or cats.shape[0] < 1:
        chk.fail("categories", cats, expected, True)
    c = cats.shape[0]
    for i, (name, out) in enumerate(zip(_NAMES, outs)):
        dtype = torch.float64 if i == 0 else torch.int64
        out = chk.output(name, out, dtype, f"{str(dtype)[6:]} [{c}]", (1,))
        if out.shape[0] != c:
            chk.fail(name, out, f"{str(dtype)[6:]} [{c}]", True)
        chk.same_device(name, out, outs[0])
    chk.same_device("categories", cats, outs[0])
    maps = []
    for name, t in (("preds", preds), ("target", target)):
        t = chk.tensor(name, t)
        if t.dtype not in _MAP_DTYPES:
            chk.fail(name, t, "an integer tensor [B, N, 2]", False)
        if t.dim() != 3 or t.shape[2] != 2:
            chk.fail(name, t, "an integer tensor [B, N, 2]", True)
        chk.same_device(name, t, outs[0])
        maps.append(t)
    p, t = maps
    if t.shape != p.shape:
        raise ValueError(f"target: expected the shape of preds, got {chk.describe(t)}")
    return p, t


def _slots(ids: Tensor, cats: Tensor) -> Tensor:
    """The category slot of every id (-1 where it is not among cats[:, 0])."""
    order = torch.argsort(cats[:, 0])
    sorted_ids = cats[order, 0]
    pos = torch.searchsorted(sorted_ids, ids.contiguous()).clamp_(max=len(sorted_ids) - 1)
    return torch.where(sorted_ids[pos] == ids, order[pos], -1)


def _segments(image: Tensor, slot: Tensor, instance: Tensor, kind: Tensor) -> Tuple[Tensor, Tensor]:
    """Per pixel its segment's index, and per segment its category slot (-1: void)."""
    is_thing = torch.where(slot >= 0, kind[slot.clamp(min=0)] == _THING, False)
    instance = torch.where(is_thing, instance, 0)
    # one int64 key per point (a 1-D unique sorts far faster than rows): the instances renumbered
    # 0..U-1 first, so that (image, slot + 1, instance number) packs without overflow
    _, number = torch.unique(instance, return_inverse=True)
    u, slots = int(number.max()) + 1, len(kind) + 1
    if (int(image[-1]) + 1) * slots * u >= _PACK_LIMIT:  # too many to pack: unique rows
        rows, inverse = torch.unique(torch.stack((image, slot, instance), 1), dim=0, return_inverse=True)
        return inverse, rows[:, 1]
    key = (image * slots + slot + 1) * u + number
    keys, inverse = torch.unique(key, return_inverse=True)
    return inverse, torch.div(keys, u, rounding_mode="floor") % slots - 1


def panoptic_update(
    iou_sum, true_positives, false_positives, false_negatives, preds, target, categories, allow_unknown_preds, /
) -> None:
    """The four per-category sums += those of the images of preds and target [B, N, 2]."""
    outs = (iou_sum, true_positives, false_positives, false_negatives)
    p, t = _check(outs, preds, target, categories)
    cats = categories
    kind = cats[:, 1]
    if bool(((kind < _THING) | (kind > _MODIFIED_STUFF)).any()):
        j = int(torch.nonzero((kind < _THING) | (kind > _MODIFIED_STUFF))[0, 0])
        raise ValueError(
            f"categories: kind {int(kind[j])} of row {j} is not 0 (thing), 1 (stuff) or 2 (modified stuff)"
        )
    ids = torch.sort(cats[:, 0]).values
    dup = torch.nonzero(ids[1:] == ids[:-1])
    if len(dup):
        raise ValueError(f"categories: category {int(ids[int(dup[0, 0])])} appears twice")
    b, n, _ = p.shape
    c = cats.shape[0]
    if b * n == 0:
        return
    p, t = p.reshape(-1, 2).long(), t.reshape(-1, 2).long()
    pslot, tslot = _slots(p[:, 0], cats), _slots(t[:, 0], cats)
    if not allow_unknown_preds and bool((pslot < 0).any()):
        i = int(torch.nonzero(pslot < 0)[0, 0])
        raise ValueError(
            f"preds: category {int(p[i, 0])} (image {i // n}, pixel {i % n}) is neither a thing nor a stuff; "
            "pass allow_unknown_preds_category=True to count such pixels as void"
        )
    device = cats.device
    image = torch.arange(b, device=device).repeat_interleave(n)
    pseg, pseg_slot = _segments(image, pslot, p[:, 1], kind)
    tseg, tseg_slot = _segments(image, tslot, t[:, 1], kind)
    np_, nt = len(pseg_slot), len(tseg_slot)
    parea = torch.bincount(pseg, minlength=np_)
    tarea = torch.bincount(tseg, minlength=nt)
    pvoid = torch.zeros_like(parea).index_add(0, pseg, (tslot < 0).long())  # pixels of P whose target is void
    tvoid = torch.zeros_like(tarea).index_add(0, tseg, (pslot < 0).long())
    if np_ * nt < _PACK_LIMIT:
        pairs, inter = torch.unique(pseg * nt + tseg, return_counts=True)
        pp, tt = pairs // nt, pairs % nt
    else:  # too many to pack: unique rows
        rows, inter = torch.unique(torch.stack((pseg, tseg), 1), dim=0, return_counts=True)
        pp, tt = rows[:, 0], rows[:, 1]
    k = tseg_slot[tt]
    same = (pseg_slot[pp] == k) & (k >= 0)
    pp, tt, k, inter = pp[same], tt[same], k[same], inter[same]
    union = parea[pp] - pvoid[pp] + tarea[tt] - tvoid[tt] - inter
    iou = inter.double() / union.double()
    modified = kind[k] == _MODIFIED_STUFF
    matched = ~modified & (2 * inter > union)
    counted = modified | matched
    add_iou = torch.zeros(c, dtype=torch.float64, device=device).index_add(0, k[counted], iou[counted])
    tp = torch.bincount(k[matched], minlength=c)
    pmatched = torch.zeros(np_, dtype=torch.bool, device=device)
    tmatched = torch.zeros(nt, dtype=torch.bool, device=device)
    pmatched[pp[matched]] = True
    tmatched[tt[matched]] = True
    treal, preal = tseg_slot >= 0, pseg_slot >= 0
    tkind = kind[tseg_slot.clamp(min=0)]
    pkind = kind[pseg_slot.clamp(min=0)]
    tp = tp + torch.bincount(tseg_slot[treal & (tkind == _MODIFIED_STUFF)], minlength=c)
    fn_seg = treal & (tkind != _MODIFIED_STUFF) & ~tmatched & (2 * tvoid <= tarea)
    fp_seg = preal & (pkind != _MODIFIED_STUFF) & ~pmatched & (2 * pvoid <= parea)
    iou_sum.add_(add_iou)
    true_positives.add_(tp)
    false_positives.add_(torch.bincount(pseg_slot[fp_seg], minlength=c))
    false_negatives.add_(torch.bincount(tseg_slot[fn_seg], minlength=c))
