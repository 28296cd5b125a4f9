"""The text family's edit-distance kernel route (csrc/API_TEXT.md, "Edit distance"): the C core for
CPU tensors, the torch reference elsewhere (the kernel has no CUDA build: its token ids are made
on the host)."""

from torch import Tensor

from .. import host_module, ops


def levenshtein(out: Tensor, tokens: Tensor, offsets: Tensor, substitution_cost: int) -> None:
    """out int64 [N] = the edit distance of each (hypothesis, reference) pair of token ids:
    pair i is tokens[offsets[2i]:offsets[2i+1]] against tokens[offsets[2i+1]:offsets[2i+2]];
    insertion and deletion cost 1, a substitution ``substitution_cost``."""
    if ops.compiling():
        return ops.levenshtein(out, tokens, offsets, substitution_cost)
    host_module(out).levenshtein(out, tokens, offsets, substitution_cost)
