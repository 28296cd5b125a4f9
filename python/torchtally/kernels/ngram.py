"""Routes of the n-gram kernels (csrc/API_TEXT.md, "N-gram statistics"): the C core for CPU tensors,
the reference (kernels.reference.ngram) otherwise. Their inputs are token ids made on the host,
so they have no CUDA build."""

from typing import Optional

from torch import Tensor

from . import host_module, ops


def bleu_update(out: Tensor, tokens: Tensor, bounds: Tensor, groups: Tensor) -> None:
    """out int64 [N + 1, 2] += per order (clipped matches, hypothesis n-grams) and, last row,
    (hypothesis tokens, closest reference's tokens)."""
    if ops.compiling():
        return ops.bleu_update(out, tokens, bounds, groups)
    host_module(out).bleu_update(out, tokens, bounds, groups)


def chrf_update(
    out: Tensor,
    sentence: Optional[Tensor],
    tokens: Tensor,
    bounds: Tensor,
    groups: Tensor,
    n_char_order: int,
    beta: float,
) -> None:
    """out int64 [C + W, 3] += per order (hypothesis n-grams, best reference's n-grams, matches);
    sentence (float64 [G] or None) = each sentence's best chrF."""
    if ops.compiling():
        return ops.chrf_update(out, sentence, tokens, bounds, groups, n_char_order, beta)
    host_module(out).chrf_update(out, sentence, tokens, bounds, groups, n_char_order, beta)
