"""chrF and chrF++: the public function chrf_score (torchmetrics' name, signature and values), the
n-gram statistics of a batch (kernels.ngram.chrf_update) and the score from them."""

from typing import Any, Tuple, Union

import torch
from torch import Tensor

from ...kernels import ngram as ngram_kernels
from . import ngram_inputs

__all__ = ["chrf_score"]


def check_chrf_args(n_char_order: Any, n_word_order: Any, beta: Any) -> None:
    """torchmetrics' checks (and messages) of chrF's orders and beta."""
    if isinstance(n_char_order, bool) or not isinstance(n_char_order, int) or n_char_order < 1:
        raise ValueError("Expected argument `n_char_order` to be an integer greater than or equal to 1.")
    if isinstance(n_word_order, bool) or not isinstance(n_word_order, int) or n_word_order < 0:
        raise ValueError("Expected argument `n_word_order` to be an integer greater than or equal to 0.")
    if not isinstance(beta, (int, float)) or not beta >= 0 or beta == float("inf"):
        raise ValueError(f"Expected argument `beta` to be greater than 0 (and finite), got {beta!r}.")


def chrf_stats(n_char_order: int, n_word_order: int) -> Tensor:
    """An empty statistics tensor: int64 [C + W, 3], per order (hypothesis n-grams, best
    reference's n-grams, matches)."""
    return torch.zeros(n_char_order + n_word_order, 3, dtype=torch.int64)


def chrf_update(
    stats: Tensor, preds: Any, target: Any, n_char_order: int, beta: float, lowercase: bool, whitespace: bool
) -> Tensor:
    """Adds a batch's statistics to `stats` (unchanged on an error); returns each sentence's chrF
    (float64 [G])."""
    hyps, refs = ngram_inputs.chrf_corpus(preds, target)
    tokens, bounds, groups = ngram_inputs.chrf_batch(hyps, refs, lowercase, whitespace)
    sentence = torch.empty(len(hyps), dtype=torch.float64)
    if stats.is_cpu:
        ngram_kernels.chrf_update(stats, sentence, tokens, bounds, groups, n_char_order, float(beta))
    else:  # the batch is made on the host: counted there by the C core, added on the device
        counts = torch.zeros(stats.shape, dtype=torch.int64)
        ngram_kernels.chrf_update(counts, sentence, tokens, bounds, groups, n_char_order, float(beta))
        stats += counts.to(stats.device)
    return sentence


def chrf_value(stats: Tensor, beta: float, dtype: torch.dtype) -> Tensor:
    """chrF from the statistics: the F-beta of each order's precision and recall, averaged over
    the orders (float64, then `dtype`)."""
    s = stats.to(torch.float64)
    hyp, ref, match = s[:, 0], s[:, 1], s[:, 2]
    zero = torch.zeros_like(match)
    precision = torch.where(hyp > 0, match / hyp.clamp(min=1), zero)
    recall = torch.where(ref > 0, match / ref.clamp(min=1), zero)
    b2 = float(beta) ** 2
    f = (1 + b2) * precision * recall / torch.clamp(b2 * precision + recall, min=1e-16)
    return (f.sum() / s.shape[0]).to(dtype)


def chrf_score(
    preds: Union[str, Any],
    target: Any,
    n_char_order: int = 6,
    n_word_order: int = 2,
    beta: float = 2.0,
    lowercase: bool = False,
    whitespace: bool = False,
    return_sentence_level_score: bool = False,
) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """chrF (``n_word_order=0``) or chrF++ (default: character 6-grams and word 2-grams) of
    hypotheses against their references, the best reference per hypothesis; as torchmetrics'
    chrf_score. ``return_sentence_level_score`` also returns each hypothesis' chrF. A hypothesis
    without a reference raises ValueError naming ``target[i]`` (torchmetrics scores it 0).

    Example::

        >>> from torchtally.functional.text import chrf_score
        >>> preds = ['the cat is on the mat']
        >>> target = [['there is a cat on the mat', 'a cat is on the mat']]
        >>> chrf_score(preds, target)
        tensor(0.8640)
    """
    check_chrf_args(n_char_order, n_word_order, beta)
    stats = chrf_stats(n_char_order, n_word_order)
    sentence = chrf_update(stats, preds, target, n_char_order, beta, lowercase, whitespace)
    dtype = torch.get_default_dtype()
    score = chrf_value(stats, beta, dtype)
    if return_sentence_level_score:
        return score, sentence.to(dtype)
    return score
