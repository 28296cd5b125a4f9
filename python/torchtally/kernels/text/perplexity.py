"""Route of the perplexity kernel (csrc/API_TEXT.md, "Text kernels"): the targets' negative
log-likelihood under softmax(logits), summed in float64, and the tokens counted. The C core for
CPU tensors, the torch reference elsewhere (no CUDA build); a custom op inside torch.compile."""

from typing import Optional

from torch import Tensor

from .. import detached, host_module, ops


def perplexity_update(
    total: Tensor, count: Tensor, preds: Tensor, target: Tensor, ignore_index: Optional[int] = None
) -> None:
    """total float64 [] += the targets' negative log-likelihood under softmax(preds); count int64 [] += tokens."""
    if ops.compiling():
        return ops.perplexity_update(total, count, detached(preds), target, ignore_index)
    host_module(total).perplexity_update(total, count, detached(preds), target, ignore_index)
