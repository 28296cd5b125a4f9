"""Routes of the text kernels (csrc/API.md, "Text kernels"): the longest common subsequence of
token-id pairs (ROUGE-L) and the perplexity sums. The C core for CPU tensors, the torch
reference elsewhere (no CUDA build); a custom op inside torch.compile."""

from typing import Optional

from torch import Tensor

from . import detached, host_module, ops


def lcs(out: Tensor, a: Tensor, a_offsets: Tensor, b: Tensor, b_offsets: Tensor) -> None:
    """out int64 [P][p] = LCS length of a[a_offsets[p]:a_offsets[p+1]] and b[b_offsets[p]:b_offsets[p+1]]."""
    if ops.compiling():
        return ops.lcs(out, a, a_offsets, b, b_offsets)
    host_module(out).lcs(out, a, a_offsets, b, b_offsets)


def perplexity_update(
    total: Tensor, count: Tensor, logits: Tensor, target: Tensor, ignore_index: Optional[int] = None
) -> None:
    """total float64 [] += the targets' negative log-likelihood under softmax(logits); count int64 [] += tokens."""
    if ops.compiling():
        return ops.perplexity_update(total, count, detached(logits), target, ignore_index)
    host_module(total).perplexity_update(total, count, detached(logits), target, ignore_index)
