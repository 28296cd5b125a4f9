"""Sentences packed for the text kernels (csrc/API.md, "Translation edit rate"): token ids of
every hypothesis and every reference in two flat int64 tensors, cut by offsets, and each
sentence's references given by ``groups``. Built on the CPU, where the kernels run."""

from typing import Dict, Hashable, List, Sequence, Tuple

import torch
from torch import Tensor


def _flat(rows: Sequence[Sequence[int]]) -> Tuple[Tensor, Tensor]:
    offsets = [0]
    flat: List[int] = []
    for row in rows:
        flat.extend(row)
        offsets.append(len(flat))
    return torch.tensor(flat, dtype=torch.int64), torch.tensor(offsets, dtype=torch.int64)


def pack(
    hyps: Sequence[Sequence[int]], groups: Sequence[Sequence[Sequence[int]]]
) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """(hyp, hyp_offsets, refs, ref_offsets, groups) of integer token rows."""
    hyp, hyp_offsets = _flat(hyps)
    refs, ref_offsets = _flat([r for rs in groups for r in rs])
    cut = [0]
    for rs in groups:
        cut.append(cut[-1] + len(rs))
    return hyp, hyp_offsets, refs, ref_offsets, torch.tensor(cut, dtype=torch.int64)


def ids(tokens: Sequence[Hashable], vocab: Dict[Hashable, int]) -> List[int]:
    """Each token's id in ``vocab`` (new tokens get the next id)."""
    return [vocab.setdefault(t, len(vocab)) for t in tokens]
