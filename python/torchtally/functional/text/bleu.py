"""BLEU: the public functions bleu_score and sacre_bleu_score (torchmetrics' names, signatures and
values), the n-gram statistics of a batch (kernels.ngram.bleu_update) and the score from them."""

from typing import List, Optional, Sequence, Union

import torch
from torch import Tensor

from ...kernels import ngram as ngram_kernels
from . import ngram_inputs, tokenizers

__all__ = ["bleu_score"]


def bleu_stats(n_gram: int) -> Tensor:
    """An empty statistics tensor: int64 [n_gram + 1, 2], per order (clipped matches, hypothesis
    n-grams), last row (hypothesis length, closest reference length)."""
    return torch.zeros(n_gram + 1, 2, dtype=torch.int64)


def bleu_update(stats: Tensor, preds: object, target: object, tokenize: str = "none", lowercase: bool = False) -> None:
    """Adds a batch's statistics to `stats` (unchanged on an error). tokenize 'none' splits on
    whitespace (bleu_score's tokenizer)."""
    hyps, refs = ngram_inputs.bleu_corpus(preds, target)
    fn = tokenizers.tokenizer(tokenize, lowercase)
    tokens, bounds, groups = ngram_inputs.bleu_batch(hyps, refs, fn)
    if stats.is_cpu:
        ngram_kernels.bleu_update(stats, tokens, bounds, groups)
    else:  # the batch is made on the host: counted there by the C core, added on the device
        counts = torch.zeros(stats.shape, dtype=torch.int64)
        ngram_kernels.bleu_update(counts, tokens, bounds, groups)
        stats += counts.to(stats.device)


def bleu_value(stats: Tensor, weights: List[float], smooth: bool, dtype: torch.dtype) -> Tensor:
    """BLEU from the statistics: the weighted geometric mean of the n-gram precisions (order 2 and
    up add one to both counts when smoothing) times the brevity penalty; 0 when an order has no
    match. Formed in float64."""
    s = stats.to(torch.float64)
    num, den = s[:-1, 0], s[:-1, 1]
    if bool((num == 0).any()):
        return torch.zeros((), dtype=dtype, device=stats.device)
    if smooth:
        precision = (num + 1) / (den + 1)
        precision[0] = num[0] / den[0]
    else:
        precision = num / den
    w = torch.tensor(weights, dtype=torch.float64, device=stats.device)
    mean = torch.exp((w * torch.log(precision)).sum())
    hyp_len, ref_len = s[-1, 0], s[-1, 1]
    penalty = torch.ones((), dtype=torch.float64) if hyp_len > ref_len else torch.exp(1 - ref_len / hyp_len)
    return (penalty * mean).to(dtype)


def bleu_score(
    preds: Union[str, Sequence[str]],
    target: Sequence[Union[str, Sequence[str]]],
    n_gram: int = 4,
    smooth: bool = False,
    weights: Optional[Sequence[float]] = None,
) -> Tensor:
    """BLEU of hypotheses `preds` against their references `target` (one sequence of references
    per hypothesis; a string is a single one), words split on whitespace; as torchmetrics'
    bleu_score. ``smooth`` adds one to the counts of orders 2 and up; ``weights`` per order
    (uniform by default).

    Example::

        >>> from torchtally.functional.text import bleu_score
        >>> preds = ['the cat is on the mat']
        >>> target = [['there is a cat on the mat', 'a cat is on the mat']]
        >>> bleu_score(preds, target)
        tensor(0.7598)
    """
    w = ngram_inputs.check_n_gram(n_gram, weights)
    stats = bleu_stats(n_gram)
    bleu_update(stats, preds, target)
    return bleu_value(stats, w, smooth, torch.get_default_dtype())
