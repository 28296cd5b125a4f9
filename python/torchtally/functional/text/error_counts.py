"""The edit-distance metrics' per-batch work: sentences checked, split into tokens (words:
``str.split()``; characters: the string's characters, Unicode code points), tokens numbered, and
every pair's edit distance from one kernel call (torchtally.kernels.text.edit.levenshtein).

Words are numbered with one dict per batch (equal words, equal ids); characters are their code
points, read in one go from the batch's UTF-32 encoding. The pairs go to the C core as one flat
token buffer and 2N + 1 offsets, hypothesis then reference for each pair.
"""

from array import array
from itertools import chain, count
from typing import Any, List, NamedTuple, Sequence, Tuple, Union

import torch
from torch import Tensor

from ...errors import InputTypeError
from ...kernels.text import edit as text_edit

Sentences = Union[str, Sequence[str]]

_I32_MAX = 2**31 - 1


class PairCounts(NamedTuple):
    """Per pair of a batch (int64 [N] each): the edit distance, the hypothesis' and the
    reference's number of tokens."""

    distance: Tensor
    preds_len: Tensor
    target_len: Tensor


def _sentence_list(name: str, value: Any) -> List[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name}: expected a str or a list of str, got {type(value).__name__}")
    if set(map(type, value)) <= {str}:  # the common case, checked at C speed
        return list(value)
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise InputTypeError(  # a TypeError, and torchmetrics' ValueError
                f"{name}[{i}]: expected a str, got {type(item).__name__} "
                f"(Expected all values in argument `{name}` to be string type)"
            )
    return list(value)


def check_sentences(preds: Any, target: Any) -> Tuple[List[str], List[str]]:
    """``preds`` and ``target`` as lists of str (a str is one sentence): TypeError for another
    type, InputTypeError (a TypeError and torchmetrics' ValueError) for a non-str item, ValueError
    for lists of different lengths; torchmetrics' words in parentheses."""
    hyps, refs = _sentence_list("preds", preds), _sentence_list("target", target)
    if len(hyps) != len(refs):
        raise ValueError(
            f"preds and target: expected as many predictions as references, got {len(hyps)} in preds and "
            f"{len(refs)} in target (Expected argument `preds` and `target` to have same length)"
        )
    return hyps, refs


def check_substitution_cost(substitution_cost: Any) -> int:
    """``substitution_cost``: an int >= 0 (torchmetrics' rule, a ValueError otherwise)."""
    if not isinstance(substitution_cost, int) or substitution_cost < 0:
        raise ValueError(f"substitution_cost: expected an int >= 0, got {substitution_cost!r}")
    return int(substitution_cost)


def _offsets(lengths: List[int]) -> Tensor:
    offsets = torch.zeros(len(lengths) + 1, dtype=torch.int64)
    if lengths:
        torch.cumsum(torch.tensor(lengths, dtype=torch.int64), 0, out=offsets[1:])
    return offsets


def _word_tokens(texts: List[str]) -> Tuple[Tensor, List[int]]:
    split = list(map(str.split, texts))
    ids: dict = {}
    numbered = array("q", map(ids.setdefault, chain.from_iterable(split), count()))
    tokens = torch.frombuffer(numbered, dtype=torch.int64) if numbered else torch.empty(0, dtype=torch.int64)
    return tokens, list(map(len, split))


def _char_tokens(texts: List[str]) -> Tuple[Tensor, List[int]]:
    encoded = bytearray("".join(texts).encode("utf-32-le", "surrogatepass"))
    tokens = torch.frombuffer(encoded, dtype=torch.int32) if encoded else torch.empty(0, dtype=torch.int32)
    return tokens, list(map(len, texts))


def pair_counts(hyps: List[str], refs: List[str], unit: str, substitution_cost: int = 1) -> PairCounts:
    """Each pair's edit distance and token counts; ``unit`` "words" or "chars"."""
    texts = [text for pair in zip(hyps, refs) for text in pair]
    tokens, lengths = (_word_tokens if unit == "words" else _char_tokens)(texts)
    distance = torch.empty(len(hyps), dtype=torch.int64)
    text_edit.levenshtein(distance, tokens, _offsets(lengths), substitution_cost)
    sizes = torch.tensor(lengths, dtype=torch.int64).reshape(-1, 2)
    return PairCounts(distance, sizes[:, 0], sizes[:, 1])


def error_sums(preds: Any, target: Any, unit: str) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """One batch's int64 sums: (edit distance, reference tokens, hypothesis tokens, max of the
    two per pair), the states of every rate of this family. Checks the input first."""
    hyps, refs = check_sentences(preds, target)
    c = pair_counts(hyps, refs, unit)
    return c.distance.sum(), c.target_len.sum(), c.preds_len.sum(), torch.maximum(c.preds_len, c.target_len).sum()


def char_distances(preds: Any, target: Any, substitution_cost: int) -> Tensor:
    """Each pair's character edit distance, int64 [N]. Checks the input first."""
    hyps, refs = check_sentences(preds, target)
    return pair_counts(hyps, refs, "chars", substitution_cost).distance


def as_int32(distance: Tensor) -> Tensor:
    """Per-pair distances in int32 (torchmetrics' per-pair dtype); one beyond int32's range
    raises rather than wraps."""
    if distance.numel() and int(distance.max()) > _I32_MAX:
        raise ValueError("preds, target: an edit distance beyond int32's range; use reduction='sum' or 'mean'")
    return distance.to(torch.int32)
