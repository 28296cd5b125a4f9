"""The text metrics' inputs as torchmetrics reads them, checked before any state changes.

``preds``: one sentence (a str) or a sequence of them. ``target``: per sentence a sequence of
reference strings; a flat sequence of strings is one sentence's references when there is one
sentence, else one reference per sentence (torchmetrics' reading). Anything else is a
TypeError (a non-string sentence or reference: InputTypeError, also the ValueError
torchmetrics' EED raises), and a count mismatch or a sentence without a reference a ValueError,
each naming the argument (torchmetrics iterates a str reference character by character, or
scores a sentence without a reference 0).
No sentence (``preds=[]``, with ``target=[]`` or ``[[]]``) is an empty batch, as in torchmetrics.
"""

from typing import List, Sequence, Tuple, Union

from ...errors import InputTypeError

Preds = Union[str, Sequence[str]]
Target = Sequence[Union[str, Sequence[str]]]


def _kind(x: object) -> str:
    return type(x).__name__


def _empty_sequence(x: object) -> bool:
    return not isinstance(x, str) and isinstance(x, Sequence) and len(x) == 0


def sentences(preds: Preds, target: Target) -> Tuple[List[str], List[List[str]]]:
    """(hypotheses, per hypothesis its references) of one update."""
    if isinstance(preds, str):
        hyps = [preds]
    elif isinstance(preds, Sequence):
        hyps = list(preds)
        for i, p in enumerate(hyps):
            if not isinstance(p, str):
                raise InputTypeError(f"preds[{i}]: expected a string, got {_kind(p)}")
    else:
        raise TypeError(f"preds: expected a string or a sequence of strings, got {_kind(preds)}")
    if isinstance(target, str) or not isinstance(target, Sequence):
        raise TypeError(
            f"target: expected a sequence of reference strings (or of sequences of them), got {_kind(target)}"
        )
    if not hyps and all(_empty_sequence(t) for t in target):
        return [], []  # no sentence: torchmetrics' `preds=[]`, `target=[[]]` (nothing to score)
    groups: List[List[str]] = []
    if all(isinstance(t, str) for t in target):
        flat = [str(t) for t in target]
        groups = [flat] if len(hyps) == 1 else [[t] for t in flat]
    elif isinstance(target[0], str):  # a flat list of references with a non-string among them
        j = next(j for j, t in enumerate(target) if not isinstance(t, str))
        raise InputTypeError(f"target[{j}]: expected a reference string (as target[0] is one), got {_kind(target[j])}")
    else:
        for i, refs in enumerate(target):
            if isinstance(refs, str) or not isinstance(refs, Sequence):
                raise TypeError(f"target[{i}]: expected a sequence of reference strings, got {_kind(refs)}")
            for k, r in enumerate(refs):
                if not isinstance(r, str):
                    raise InputTypeError(f"target[{i}][{k}]: expected a reference string, got {_kind(r)}")
            groups.append([str(r) for r in refs])
    if len(groups) != len(hyps):
        raise ValueError(
            f"preds and target: expected one entry of references in target per sentence of preds, got "
            f"{len(hyps)} sentences in preds and {len(groups)} entries in target "
            f"(Corpus has different size {len(groups)} != {len(hyps)})"
        )
    for i, refs in enumerate(groups):
        if not refs:
            raise ValueError(f"target[{i}]: expected at least one reference, got none")
    return hyps, groups


def check_flag(name: str, value: object) -> bool:
    """A bool option (torchmetrics raises ValueError for anything else)."""
    if not isinstance(value, bool):
        raise ValueError(f"{name}: expected a bool, got {value!r}")
    return value
