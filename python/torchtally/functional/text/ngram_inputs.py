"""The n-gram metrics' inputs: checks (torchmetrics' accepted forms, and errors before any state
changes) and the flat batch the n-gram kernels read (csrc/API.md, "N-gram statistics"): token ids
of every segment, each sentence's hypothesis followed by its references."""

from array import array
from itertools import chain
from typing import Any, Callable, List, Optional, Sequence, Tuple

import torch
from torch import Tensor

_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")

Batch = Tuple[Tensor, Tensor, Tensor]  # tokens int64 [T], bounds int64 [K, S + 1], groups int64 [G + 1]


def _strings(name: str, values: Any) -> List[str]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(f"{name}: expected a sequence of strings, got {type(values).__name__}")
    out = list(values)
    for i, v in enumerate(out):
        if not isinstance(v, str):
            raise TypeError(f"{name}: expected strings, got {type(v).__name__} at index {i}")
    return out


def _references(target: Any, i: int) -> List[str]:
    if isinstance(target, str):
        return [target]
    return _strings(f"target[{i}]", target)


def bleu_corpus(preds: Any, target: Any) -> Tuple[List[str], List[List[str]]]:
    """(hypotheses, references per hypothesis) as torchmetrics' bleu_score reads them: a string
    `preds` is one hypothesis, a string in `target` one reference. Each hypothesis needs one."""
    hyps = [preds] if isinstance(preds, str) else _strings("preds", preds)
    if isinstance(target, str) or not isinstance(target, Sequence):
        raise TypeError(f"target: expected a sequence of references per hypothesis, got {type(target).__name__}")
    refs = [_references(t, i) for i, t in enumerate(target)]
    _check_sizes(hyps, refs, f"Corpus has different size {len(hyps)} != {len(refs)}")
    return hyps, refs


def chrf_corpus(preds: Any, target: Any) -> Tuple[List[str], List[List[str]]]:
    """(hypotheses, references per hypothesis) as torchmetrics' chrf_score reads them: a string
    `preds` is one hypothesis; a `target` of strings is the references of a single hypothesis, or
    one reference per hypothesis. Each hypothesis needs one (torchmetrics scores it 0)."""
    hyps = [preds] if isinstance(preds, str) else _strings("preds", preds)
    if isinstance(target, str) or not isinstance(target, Sequence):
        raise TypeError(f"target: expected a sequence of references per hypothesis, got {type(target).__name__}")
    if not hyps and all(not isinstance(t, str) and isinstance(t, Sequence) and not t for t in target):
        return [], []  # no sentence: torchmetrics' `preds=[]`, `target=[[]]` (nothing to score)
    if all(isinstance(t, str) for t in target):
        refs = [list(target)] if len(hyps) == 1 else [[t] for t in target]
    else:
        refs = [_references(t, i) for i, t in enumerate(target)]
    _check_sizes(hyps, refs, f"Corpus has different size {len(refs)} != {len(hyps)}")
    return hyps, refs


def _check_sizes(hyps: List[str], refs: List[List[str]], torchmetrics_says: str) -> None:
    """One reference list per hypothesis, none empty. `torchmetrics_says`: torchmetrics' message
    for a count mismatch, kept in parentheses for code that matches on it."""
    if len(hyps) != len(refs):
        raise ValueError(
            f"preds and target: expected one list of references in target per hypothesis in preds, got "
            f"{len(hyps)} hypotheses in preds and {len(refs)} reference lists in target ({torchmetrics_says})"
        )
    if all(refs):  # the common case, at C speed
        return
    i = next(i for i, r in enumerate(refs) if not r)
    raise ValueError(f"target[{i}]: expected at least one reference for hypothesis {i} of preds, got none")


def check_n_gram(n_gram: Any, weights: Optional[Sequence[float]]) -> List[float]:
    """The weights of BLEU's orders 1..n_gram (uniform when None), checked."""
    if isinstance(n_gram, bool) or not isinstance(n_gram, int) or n_gram < 1:
        raise ValueError(f"n_gram: expected an integer >= 1, got {n_gram!r}")
    if weights is None:
        return [1.0 / n_gram] * n_gram
    if len(weights) != n_gram:
        raise ValueError(f"List of weights has different weights than `n_gram`: {len(weights)} != {n_gram}")
    return [float(w) for w in weights]


class _Vocab(dict):
    """Token -> id, a new token getting the next id (looked up at C speed through __getitem__)."""

    def __missing__(self, token: str) -> int:
        self[token] = i = len(self)
        return i


class _WordPieces(dict):
    """chrF++'s word -> the ids of its pieces (see _pieces), ids from `vocab`."""

    def __init__(self, vocab: _Vocab) -> None:
        super().__init__()
        self.vocab = vocab

    def __missing__(self, word: str) -> Tuple[int, ...]:
        self[word] = ids = tuple(self.vocab[p] for p in _pieces(word))
        return ids


def bleu_batch(hyps: List[str], refs: List[List[str]], tokenize: Callable[[str], List[str]]) -> Batch:
    """The kernel's batch of word ids (one id per distinct token of the batch)."""
    ids = _Vocab().__getitem__
    flat = array("q")
    bounds, groups = [0], [0]
    for hyp, references in zip(hyps, refs):
        for line in (hyp, *references):
            if line:
                flat.extend(map(ids, tokenize(line)))
            bounds.append(len(flat))
        groups.append(len(bounds) - 1)
    return _tensors(_int64(flat), [bounds], groups)


def _pieces(word: str) -> Tuple[str, ...]:
    """chrF++'s split of a whitespace-separated word: a punctuation mark at its end (else at its
    start) split off when the word has two characters or more."""
    if len(word) > 1 and word[-1] in _PUNCTUATION:
        return (word[:-1], word[-1])
    if len(word) > 1 and word[0] in _PUNCTUATION:
        return (word[0], word[1:])
    return (word,)


def chrf_batch(hyps: List[str], refs: List[List[str]], lowercase: bool, whitespace: bool) -> Batch:
    """The kernel's batch: characters (their code points) in stream 0, words' ids in stream 1."""
    pieces = _WordPieces(_Vocab()).__getitem__
    chars: List[str] = []
    words = array("q")
    char_bounds, word_bounds, groups = [0], [0], [0]
    n_chars = 0
    for hyp, references in zip(hyps, refs):
        for line in (hyp, *references):
            if lowercase:
                line = line.lower()
            c = line if whitespace else line.strip().replace(" ", "")
            chars.append(c)
            n_chars += len(c)
            char_bounds.append(n_chars)
            words.extend(chain.from_iterable(map(pieces, line.split())))
            word_bounds.append(len(words))
        groups.append(len(char_bounds) - 1)
    encoded = bytearray("".join(chars).encode("utf-32-le", "surrogatepass"))
    code_points = torch.frombuffer(encoded, dtype=torch.int32) if encoded else torch.empty(0, dtype=torch.int32)
    tokens = torch.cat((code_points.to(torch.int64), _int64(words)))
    return _tensors(tokens, [char_bounds, [n_chars + b for b in word_bounds]], groups)


def _int64(values: "array[int]") -> Tensor:
    """An int64 tensor over `values` (no copy; the tensor keeps the array alive)."""
    return torch.frombuffer(values, dtype=torch.int64) if len(values) else torch.empty(0, dtype=torch.int64)


def _tensors(tokens: Tensor, bounds: List[List[int]], groups: List[int]) -> Batch:
    return tokens, torch.tensor(bounds, dtype=torch.int64), torch.tensor(groups, dtype=torch.int64)
