"""extended_edit_distance: the mean extended edit distance (EED) of one batch (torchmetrics'
functional form and values; see torchtally.text.ExtendedEditDistance)."""

from typing import Tuple, Union

import torch
from torch import Tensor

from . import extended_sums, reference_groups

__all__ = ["extended_edit_distance"]


def extended_edit_distance(
    preds: reference_groups.Preds,
    target: reference_groups.Target,
    language: str = "en",
    return_sentence_level_score: bool = False,
    alpha: float = 2.0,
    rho: float = 0.3,
    deletion: float = 0.2,
    insertion: float = 1.0,
) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """Mean over sentences of each sentence's lowest EED over its references (a character-level
    edit distance with jumps and a coverage penalty; Stanchev et al., WMT 2019). ``language``
    "en" or "ja" chooses the text preparation; ``alpha`` (jump), ``rho`` (coverage),
    ``deletion`` and ``insertion`` costs are non-negative finite floats. 0 for no sentences.
    With ``return_sentence_level_score``: also the scores per sentence [N] (empty for none,
    where torchmetrics fails). Results in torch's default dtype, from float64 sums.

        >>> from torchtally.functional.text import extended_edit_distance
        >>> preds = ["this is the prediction", "here is an other sample"]
        >>> target = ["this is the reference", "here is another one"]
        >>> extended_edit_distance(preds=preds, target=target)
        tensor(0.3078)
    """
    language = extended_sums.check_language(language)
    costs = extended_sums.check_costs(alpha, rho, deletion, insertion)
    scores = extended_sums.sentence_scores(preds, target, language, costs)
    dtype = torch.get_default_dtype()
    mean = (scores.sum() / scores.numel() if scores.numel() else scores.sum()).to(dtype)
    if return_sentence_level_score:
        return mean, scores.to(dtype)
    return mean
