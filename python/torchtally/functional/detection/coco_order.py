"""MeanAveragePrecision's images in dataset order, and extended_summary's IoU matrices
(package-internal).

A sync concatenates each rank's rows, rank after rank; torchmetrics' gather interleaves the
images (image i of rank 0, image i of rank 1, ..., then image i + 1), which is the dataset's
order under a DistributedSampler and the order one process over the whole dataset sees. The
order decides how equal scores of different images accumulate, so compute puts the rows in
that order first: each image's row in the per-image state holds the rank that saw it (and
whether it has a ground truth) and how many rows of each row state it owns.
"""

from typing import Dict, List, Sequence, Tuple, Union

import torch
from torch import Tensor


def interleaved(ranks: Tensor) -> Tensor:
    """int64 [I]: the gathered images (given their ranks, in the gathered order: each rank's own
    in update order) in torchmetrics' order, sorted by (position within the rank, rank)."""
    ranks = ranks.long()
    n = ranks.numel()
    if n == 0:
        return torch.zeros(0, dtype=torch.int64)
    width = int(ranks.max()) + 1
    by_rank = torch.sort(ranks, stable=True).indices  # O(I) memory at any world size
    sorted_ranks = ranks[by_rank]
    counts = torch.bincount(sorted_ranks, minlength=width)
    position = torch.empty_like(ranks)
    position[by_rank] = torch.arange(n) - (torch.cumsum(counts, 0) - counts)[sorted_ranks]
    return torch.sort(position * width + ranks, stable=True).indices


def permute_segments(rows: Tensor, counts: Tensor, order: Tensor) -> Tensor:
    """``rows`` made of consecutive segments of ``counts`` rows (one per image), with the
    segments taken in ``order``."""
    counts = counts.long()
    if rows.shape[0] != int(counts.sum()):
        raise ValueError(f"permute_segments: {rows.shape[0]} rows for segments of {int(counts.sum())} in all")
    starts = torch.cumsum(counts, 0) - counts
    taken = counts[order]
    new_starts = torch.cumsum(taken, 0) - taken
    shift = torch.repeat_interleave(starts[order] - new_starts, taken)
    return rows[torch.arange(rows.shape[0]) + shift]


def iou_dict(
    values: Tensor, index: Tensor, per_image: Tensor, order: Tensor, evaluated: Tensor, labels: Sequence[int]
) -> Dict[Tuple[int, int], Union[Tensor, List[float]]]:
    """pycocotools' ``COCOeval.ious`` as torchmetrics returns it: {(image id, label): float32
    [D, G]} for every evaluated image and label, an empty list where the pair has no detection
    or no ground truth. ``values``: the float32 blocks in gathered order; ``index``: int32 [P, 3]
    (label, D, G) per block; ``per_image``: the number of blocks of each gathered image;
    ``order``: the gathered images in dataset order (``interleaved``); ``evaluated``: bool per
    gathered image, whether pycocotools has it among its images."""
    image_id = torch.empty_like(order)
    image_id[order] = torch.arange(order.numel())
    out: Dict[Tuple[int, int], Union[Tensor, List[float]]] = {}
    for img in sorted(image_id[evaluated].tolist()):
        for label in labels:
            out[(img, int(label))] = []
    block_image = image_id[torch.repeat_interleave(torch.arange(per_image.numel()), per_image.long())]
    sizes = (index[:, 1].long() * index[:, 2].long()).tolist()
    start = 0
    for img, (label, d, g), size in zip(block_image.tolist(), index.tolist(), sizes):
        out[(img, label)] = values[start : start + size].reshape(d, g).clone()
        start += size
    return out
