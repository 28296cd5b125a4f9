"""Route of the LCS kernel (csrc/API_TEXT.md, "Text kernels"): the longest common subsequence of
token-id pairs (ROUGE-L). The C core for CPU tensors, the torch reference elsewhere (no CUDA
build); a custom op inside torch.compile."""

from torch import Tensor

from .. import host_module, ops


def lcs(out: Tensor, a: Tensor, a_offsets: Tensor, b: Tensor, b_offsets: Tensor) -> None:
    """out int64 [P][p] = LCS length of a[a_offsets[p]:a_offsets[p+1]] and b[b_offsets[p]:b_offsets[p+1]]."""
    if ops.compiling():
        return ops.lcs(out, a, a_offsets, b, b_offsets)
    host_module(out).lcs(out, a, a_offsets, b, b_offsets)
