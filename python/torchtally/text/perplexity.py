"""Perplexity: state declarations; the math lives in torchtally.functional.text.perplexity and
the C kernel csrc/kernels/perplexity.c.

State: ``total_log_probs``, the float64 sum of the target tokens' negative log-likelihood, and
``count``, an int64 count of tokens; both sum-reduced (16 bytes). Results are in ``self.dtype``
(float32 by default, as torchmetrics' float32 state gives).

Deliberate differences from torchmetrics:

* the log-softmax is taken per token at its target with float64 accumulation, without forming
  the [N, T, V] probabilities (torchmetrics: softmax and log in the logits' dtype, which
  underflows to -inf for unlikely tokens in float16/float32);
* NaN or +inf logits and targets outside [0, V) (other than ``ignore_index``) raise
  ValueError with the state unchanged (torchmetrics: a NaN result, an IndexError, or a negative
  target read from the end of the row);
* no gradient (``is_differentiable`` is False).
"""

from typing import TYPE_CHECKING, Any, Dict, Optional

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.text.perplexity import check_ignore_index, perplexity_result, perplexity_update

__all__ = ["Perplexity"]


class Perplexity(Metric):
    """Perplexity of a language model: exp of the mean negative log-likelihood of the target
    tokens. ``update(preds, target)``: logits [N, T, V] (float16, bfloat16, float32, float64)
    and token ids [N, T] (int64); tokens equal to ``ignore_index`` do not count.

    Differences from torchmetrics: see the module docstring (float64, no [N, T, V]
    probabilities, bad values raise, no gradient).

        >>> import torch
        >>> from torchtally.text import Perplexity
        >>> logits = torch.tensor([[[2.0, 0.5, 0.1], [0.2, 1.5, 0.3]]])
        >>> Perplexity(ignore_index=-100).update(logits, torch.tensor([[0, 1]])).compute()
        tensor(1.4698)
    """

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    if TYPE_CHECKING:  # declared states, read as attributes
        total_log_probs: Tensor
        count: Tensor

    def __init__(self, ignore_index: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ignore_index = check_ignore_index(ignore_index)
        self.add_state("total_log_probs", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        self.add_state("count", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        perplexity_update(self.total_log_probs, self.count, preds, target, self.ignore_index)

    def compute(self) -> Tensor:
        return perplexity_result(self.total_log_probs, self.count, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "total_log_probs", "count")
