"""Perplexity: exp of the mean negative log-likelihood of the target tokens under a language
model's logits (torchmetrics.functional.text.perplexity). The kernel (csrc/kernels/perplexity.c)
takes each token's log-softmax at its target without forming the [N, T, V] probabilities,
accumulating in float64."""

import math
from typing import Optional

import torch
from torch import Tensor

from ...kernels.text import perplexity as text_perplexity

__all__ = ["perplexity"]


def check_ignore_index(ignore_index: Optional[int]) -> Optional[int]:
    if ignore_index is not None and (isinstance(ignore_index, bool) or not isinstance(ignore_index, int)):
        raise TypeError(f"ignore_index: expected an int or None, got {ignore_index!r}")
    return ignore_index


def check_perplexity_inputs(preds: Tensor, target: Tensor) -> None:
    """torchmetrics' checks: preds [N, T, V] floating, target [N, T] int64."""
    for name, value in (("preds", preds), ("target", target)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}: expected a tensor, got {type(value).__name__}")
    if preds.dim() != 3:
        raise ValueError(f"preds: expected 3 dimensions [batch_size, seq_len, vocab_size], got {preds.dim()}")
    if target.dim() != 2:
        raise ValueError(f"target: expected 2 dimensions [batch_size, seq_len], got {target.dim()}")
    if preds.shape[:2] != target.shape:
        raise ValueError(
            f"target: expected the first two dimensions of preds {list(preds.shape[:2])}, got {list(target.shape)}"
        )
    if not preds.is_floating_point():
        raise TypeError(f"preds: expected a floating point tensor, got {preds.dtype}")
    if target.dtype != torch.int64:
        raise TypeError(f"target: expected a tensor of type torch.int64, got {target.dtype}")


def perplexity_update(total: Tensor, count: Tensor, preds: Tensor, target: Tensor, ignore_index: Optional[int]) -> None:
    """total float64 [] += the targets' negative log-likelihood, count int64 [] += the tokens
    counted (target != ignore_index). A NaN or +inf logit, or a target out of [0, V), raises
    ValueError with both untouched."""
    check_perplexity_inputs(preds, target)
    text_perplexity.perplexity_update(total, count, preds, target.to(total.device), ignore_index)


def _exp_of_mean(total: float, count: int) -> float:
    """exp(total / count) as torch's float64 ops give it: NaN for 0 / 0, inf past float64's range."""
    if count == 0:
        mean = math.nan if total == 0 or math.isnan(total) else math.copysign(math.inf, total)
    else:
        mean = total / count
    try:
        return math.exp(mean)
    except OverflowError:
        return math.inf


def perplexity_result(total: Tensor, count: Tensor, dtype: torch.dtype) -> Tensor:
    """exp(total / count) in ``dtype`` (NaN over no token). On the CPU the two numbers are read and
    the result made as one scalar tensor (~2 us); three tensor ops (divide, exp, cast) cost ~15."""
    if total.device.type == "cpu":
        value = _exp_of_mean(total.item(), int(count.item()))
        try:
            return torch.scalar_tensor(value, dtype=dtype)
        except RuntimeError:  # beyond dtype's range, which scalar_tensor refuses and a cast makes inf
            return torch.scalar_tensor(value, dtype=torch.float64).to(dtype)
    return torch.exp(total / count).to(dtype)


def perplexity(preds: Tensor, target: Tensor, ignore_index: Optional[int] = None) -> Tensor:
    """Perplexity of logits ``preds`` [N, T, V] for the tokens ``target`` [N, T] (int64);
    tokens equal to ``ignore_index`` do not count. The result has preds' dtype.

    Differences from torchmetrics: float64 accumulation (torchmetrics: softmax and log in the
    logits' dtype); NaN or +inf logits and targets out of [0, V) raise ValueError (torchmetrics:
    NaN, an IndexError, or a negative target silently read from the end of the row); no gradient.

        >>> import torch
        >>> from torchtally.functional.text import perplexity
        >>> logits = torch.tensor([[[2.0, 0.5, 0.1], [0.2, 1.5, 0.3]]])
        >>> perplexity(logits, torch.tensor([[0, 1]]))
        tensor(1.4698)
        >>> perplexity(logits, torch.tensor([[0, -100]]), ignore_index=-100)
        tensor(1.3727)
    """
    ignore_index = check_ignore_index(ignore_index)
    total = torch.zeros((), dtype=torch.float64, device=preds.device if isinstance(preds, Tensor) else None)
    count = torch.zeros((), dtype=torch.int64, device=total.device)
    perplexity_update(total, count, preds, target, ignore_index)
    return perplexity_result(total, count, preds.dtype)
