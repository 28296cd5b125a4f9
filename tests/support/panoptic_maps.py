"""Random panoptic maps for the panoptic quality tests: blocky (category, instance) images, a
target and a prediction that overlaps it imperfectly (shifted boxes, swapped instances, wrong or
unknown categories, pixel noise), so that segments match, miss and fall on void."""

from typing import Sequence, Tuple

import torch

THINGS = (0, 1, 3)
STUFFS = (5, 6)
UNKNOWN = (2, 9)  # neither things nor stuffs: void


def _choice(g: torch.Generator, values: Sequence[int], size: Tuple[int, ...] = ()) -> torch.Tensor:
    return torch.tensor(values)[torch.randint(0, len(values), size, generator=g)]


def _image(g: torch.Generator, shape: Tuple[int, ...], unknown: bool) -> torch.Tensor:
    """One target image [*shape, 2]: stuff background, thing boxes, maybe an unknown box."""
    img = torch.zeros(*shape, 2, dtype=torch.int64)
    img[..., 0] = int(_choice(g, STUFFS))
    img[..., 1] = int(torch.randint(0, 5, (), generator=g))  # a stuff's instance id is ignored
    half = [slice(None)] * len(shape)
    half[0] = slice(shape[0] // 2, None)
    img[tuple(half) + (0,)] = int(_choice(g, STUFFS))
    for box in range(int(torch.randint(1, 6, (), generator=g))):
        lo = [int(torch.randint(0, s, (), generator=g)) for s in shape]
        hi = [min(s, a + 1 + int(torch.randint(0, max(1, s // 2), (), generator=g))) for a, s in zip(lo, shape)]
        where = tuple(slice(a, b) for a, b in zip(lo, hi))
        last = unknown and box == 0
        img[where + (0,)] = int(_choice(g, UNKNOWN if last else THINGS))
        img[where + (1,)] = int(torch.randint(0, 3, (), generator=g))
    return img


def _perturb(g: torch.Generator, img: torch.Tensor, unknown: bool) -> torch.Tensor:
    out = torch.roll(img, shifts=int(torch.randint(-1, 2, (), generator=g)), dims=0)
    flip = torch.rand(img.shape[:-1], generator=g) < 0.08
    cats = THINGS + STUFFS + (UNKNOWN if unknown else ())
    out[..., 0] = torch.where(flip, _choice(g, cats, tuple(img.shape[:-1])), out[..., 0])
    swap = torch.rand(img.shape[:-1], generator=g) < 0.05
    out[..., 1] = torch.where(swap, torch.randint(0, 3, img.shape[:-1], generator=g), out[..., 1])
    if not unknown:  # an unknown box rolled over from the target becomes a known category
        bad = (out[..., 0] == UNKNOWN[0]) | (out[..., 0] == UNKNOWN[1])
        out[..., 0] = torch.where(bad, THINGS[0], out[..., 0])
    return out


def panoptic_batch(
    seed: int, batch: int, shape: Tuple[int, ...], unknown_preds: bool = False, dtype: torch.dtype = torch.int64
) -> Tuple[torch.Tensor, torch.Tensor]:
    """(preds, target) [batch, *shape, 2]; target always holds unknown (void) boxes, preds only
    with ``unknown_preds``."""
    g = torch.Generator().manual_seed(seed)
    target = torch.stack([_image(g, shape, True) for _ in range(batch)]) if batch else torch.zeros(0, *shape, 2)
    preds = torch.stack([_perturb(g, t, unknown_preds) for t in target]) if batch else target.clone()
    return preds.to(dtype), target.to(dtype)
