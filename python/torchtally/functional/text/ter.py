"""translation_edit_rate: Tercom's translation edit rate of one batch (torchmetrics'
functional form; values as sacrebleu's TER, see torchtally.text.TranslationEditRate)."""

from typing import List, Tuple, Union

import torch
from torch import Tensor

from . import reference_groups, translation_sums

__all__ = ["translation_edit_rate"]


def translation_edit_rate(
    preds: reference_groups.Preds,
    target: reference_groups.Target,
    normalize: bool = False,
    no_punctuation: bool = False,
    lowercase: bool = True,
    asian_support: bool = False,
    return_sentence_level_score: bool = False,
) -> Union[Tensor, Tuple[Tensor, List[Tensor]]]:
    """Translation edit rate (TER) of hypotheses ``preds`` against one or more references per
    sentence: the sum over sentences of Tercom's fewest edits (word insertions, deletions,
    substitutions and shifts of word spans) over the sum of average reference lengths. Options
    as torchmetrics' (Tercom's tokeniser). With ``return_sentence_level_score``: also each
    sentence's TER, a list of one-element tensors (as torchmetrics; a list also for no
    sentences, where torchmetrics returns the score alone). Results in torch's default dtype.
    Differences from torchmetrics: see torchtally.text.TranslationEditRate.

        >>> from torchtally.functional.text import translation_edit_rate
        >>> preds = ['the cat is on the mat']
        >>> target = [['there is a cat on the mat', 'a cat is on the mat']]
        >>> translation_edit_rate(preds, target)
        tensor(0.1538)
    """
    options = translation_sums.check_options(normalize, no_punctuation, lowercase, asian_support)
    stats = translation_sums.sentence_stats(preds, target, options)
    dtype = torch.get_default_dtype()
    score = translation_sums.rate(stats[:, 0].sum(), stats[:, 1].sum()).to(dtype)
    if not return_sentence_level_score:
        return score
    rows = translation_sums.rate(stats[:, 0], stats[:, 1]).to(dtype)
    return score, list(rows.reshape(-1, 1).unbind(0))
