"""Routes of the translation kernels (csrc/API_TEXT.md, "Translation edit rate" and "Extended edit
distance"): the C core for CPU tensors when it is built, the reference (kernels.reference.ter,
.eed) otherwise; as custom ops while dynamo traces. Both kernels run on the host only: the
metrics pack their token ids on the CPU."""

from torch import Tensor

from .. import detached, host_module, ops


def ter_sentences(
    out: Tensor, hyp: Tensor, hyp_offsets: Tensor, refs: Tensor, ref_offsets: Tensor, groups: Tensor
) -> None:
    """out float64 [N, 2] = per sentence (Tercom's fewest edits over its references, their
    average length), from packed int64 token ids."""
    if ops.compiling():
        return ops.ter_sentences(out, hyp, hyp_offsets, refs, ref_offsets, groups)
    host_module(out).ter_sentences(out, hyp, hyp_offsets, refs, ref_offsets, groups)


def eed_sentences(
    out: Tensor, hyp: Tensor, hyp_offsets: Tensor, refs: Tensor, ref_offsets: Tensor, groups: Tensor, costs: Tensor
) -> None:
    """out float64 [N] = per sentence the lowest extended edit distance over its references, from
    packed int64 character codes; costs float64 [4] = (alpha, rho, deletion, insertion)."""
    if ops.compiling():
        return ops.eed_sentences(out, hyp, hyp_offsets, refs, ref_offsets, groups, detached(costs))
    host_module(out).eed_sentences(out, hyp, hyp_offsets, refs, ref_offsets, groups, detached(costs))
