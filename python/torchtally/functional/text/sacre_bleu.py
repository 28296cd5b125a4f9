"""``sacre_bleu_score`` (torchmetrics.functional.text.sacre_bleu's names). BLEU as SacreBLEU
computes it."""

from typing import Optional, Sequence

import torch
from torch import Tensor

from . import ngram_inputs, tokenizers
from .bleu import bleu_stats, bleu_update, bleu_value

__all__ = ["sacre_bleu_score"]


def sacre_bleu_score(
    preds: Sequence[str],
    target: Sequence[Sequence[str]],
    n_gram: int = 4,
    smooth: bool = False,
    tokenize: str = "13a",
    lowercase: bool = False,
    weights: Optional[Sequence[float]] = None,
) -> Tensor:
    """BLEU as SacreBLEU computes it: lines tokenised by ``tokenize`` ('13a' (default), 'zh',
    'intl', 'char', 'none', 'ja-mecab', 'ko-mecab', 'flores101', 'flores200'; the last four need
    their packages: a ModuleNotFoundError says which), lowercased after tokenising when
    ``lowercase``; as torchmetrics' sacre_bleu_score (references grouped per hypothesis).

    Example::

        >>> from torchtally.functional.text import sacre_bleu_score
        >>> preds = ['the cat is on the mat']
        >>> target = [['there is a cat on the mat', 'a cat is on the mat']]
        >>> sacre_bleu_score(preds, target)
        tensor(0.7598)
    """
    w = ngram_inputs.check_n_gram(n_gram, weights)
    tokenizers.check_tokenize(tokenize)
    stats = bleu_stats(n_gram)
    bleu_update(stats, preds, target, tokenize, lowercase)
    return bleu_value(stats, w, smooth, torch.get_default_dtype())
