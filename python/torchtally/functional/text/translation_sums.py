"""TranslationEditRate's update and compute: per sentence Tercom's fewest edits over its
references and their average length (kernel ter_sentences, csrc/API.md), summed in float64."""

from typing import Dict, Hashable, List, Tuple

import torch
from torch import Tensor

from ...kernels.text import ter as text_ter
from . import packing, reference_groups, tercom

Options = Tuple[bool, bool, bool, bool]  # normalize, no_punctuation, lowercase, asian_support


def check_options(normalize: object, no_punctuation: object, lowercase: object, asian_support: object) -> Options:
    """The tokeniser's four bool options (ValueError for anything else, as torchmetrics)."""
    names = ("normalize", "no_punctuation", "lowercase", "asian_support")
    values = (normalize, no_punctuation, lowercase, asian_support)
    return tuple(reference_groups.check_flag(n, v) for n, v in zip(names, values))  # type: ignore[return-value]


def sentence_stats(preds: reference_groups.Preds, target: reference_groups.Target, options: Options) -> Tensor:
    """float64 [N, 2]: per sentence (edits, average reference length). Raises before any work on
    a bad batch."""
    hyps, groups = reference_groups.sentences(preds, target)
    vocab: Dict[Hashable, int] = {}
    hyp_ids = [packing.ids(tercom.words(h, *options), vocab) for h in hyps]
    ref_ids: List[List[List[int]]] = [[packing.ids(tercom.words(r, *options), vocab) for r in rs] for rs in groups]
    out = torch.zeros(len(hyps), 2, dtype=torch.float64)
    text_ter.ter_sentences(out, *packing.pack(hyp_ids, ref_ids))
    return out


def rate(edits: Tensor, length: Tensor) -> Tensor:
    """edits / length, 1 where length is 0 and edits are not, 0 where both are (sacrebleu's)."""
    zero = length == 0
    ratio = edits / torch.where(zero, torch.ones_like(length), length)
    return torch.where(zero, (edits > 0).to(edits.dtype), ratio)
