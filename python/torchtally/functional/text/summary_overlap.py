"""ROUGE: one batch of (prediction, references) into per-key sums of (fmeasure, precision,
recall) over the batch's samples; the choices as torchmetrics' (and rouge-score's) ROUGE.

Text is lower-cased, every run of characters outside [a-z0-9] becomes a space and it is split on
whitespace (or a user's ``normalizer`` / ``tokenizer`` replace those steps); with a stemmer,
tokens longer than 3 characters are stemmed (nltk's PorterStemmer); empty tokens are dropped.
ROUGE-N counts clipped n-gram hits; ROUGE-L takes the longest common subsequence (the C kernel,
one call for every pair of the batch); ROUGE-Lsum the union LCS of each reference sentence
against the prediction's sentences, sentences split by nltk's punkt model as torchmetrics does.
A sample with several references keeps the one with the best fmeasure (``accumulate="best"``,
the first on a tie, compared as float32 as torchmetrics does) or their mean (``"avg"``).
"""

import functools
import re
import struct
from collections import Counter
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

from ...kernels.text import lcs as text_lcs

ROUGE_KEYS: Dict[str, Union[int, str]] = {**{f"rouge{n}": n for n in range(1, 10)}, "rougeL": "L", "rougeLsum": "Lsum"}
ACCUMULATE = ("avg", "best")
COLUMNS = ("fmeasure", "precision", "recall")

Triple = Tuple[float, float, float]  # (fmeasure, precision, recall)
_ZERO: Triple = (0.0, 0.0, 0.0)


def check_rouge_keys(rouge_keys: Union[str, Sequence[str]]) -> Tuple[str, ...]:
    """The keys as a tuple; ValueError for a key outside rouge1..rouge9, rougeL, rougeLsum."""
    keys = (rouge_keys,) if isinstance(rouge_keys, str) else tuple(rouge_keys)
    for key in keys:
        if key not in ROUGE_KEYS:
            raise ValueError(f"rouge_keys: got unknown rouge key {key!r}; expected keys among {list(ROUGE_KEYS)}")
    if not keys:
        raise ValueError("rouge_keys: expected at least one key")
    return keys


def check_accumulate(accumulate: str) -> str:
    if accumulate not in ACCUMULATE:
        raise ValueError(f"accumulate: expected one of {ACCUMULATE}, got {accumulate!r}")
    return accumulate


@functools.lru_cache(maxsize=1)
def _porter_stem() -> Callable[[str], str]:
    from nltk.stem.porter import PorterStemmer  # type: ignore[import-untyped]

    return functools.lru_cache(maxsize=1 << 16)(PorterStemmer().stem)


def make_stemmer(use_stemmer: bool) -> Optional[Callable[[str], str]]:
    """nltk's PorterStemmer's ``stem`` (one memoised instance for the process), or None."""
    if not use_stemmer:
        return None
    try:
        return _porter_stem()
    except ImportError as err:  # pragma: no cover - nltk is a dependency of the text extras
        raise ModuleNotFoundError("use_stemmer: the stemmer needs nltk (`pip install nltk`)") from err


def split_sentences(text: str) -> List[str]:
    """nltk's punkt sentences of ``text`` (as torchmetrics' rougeLsum); never downloads."""
    try:
        import nltk  # type: ignore[import-untyped]
    except ImportError as err:  # pragma: no cover
        raise ModuleNotFoundError("rougeLsum needs nltk (`pip install nltk`)") from err
    try:
        nltk.data.find("tokenizers/punkt_tab")
    except LookupError as err:
        raise OSError(
            "rougeLsum splits sentences with nltk's punkt model, which is not on this machine; torchtally "
            "never downloads at run time: run `import nltk; nltk.download('punkt_tab')` once, or pass "
            "rouge_keys without 'rougeLsum'"
        ) from err
    return list(nltk.sent_tokenize(text))


def as_pairs(preds: Any, target: Any) -> Tuple[List[str], List[List[str]]]:
    """torchmetrics' accepted forms: a string or a list of strings for preds; for target a
    string, a list of strings (one reference per prediction, or every reference of a single
    prediction) or a list of lists of strings. Lengths must agree (torchmetrics drops the rest)."""
    if isinstance(target, (list, tuple)) and all(isinstance(t, str) for t in target):
        target = [list(target)] if isinstance(preds, str) else [[t] for t in target]
    if isinstance(preds, str):
        preds = [preds]
    if isinstance(target, str):
        target = [[target]]
    if not isinstance(preds, (list, tuple)) or not all(isinstance(p, str) for p in preds):
        raise TypeError(f"preds: expected a string or a sequence of strings, got {type(preds).__name__}")
    if not isinstance(target, (list, tuple)):
        raise TypeError(
            f"target: expected a string or a sequence of (sequences of) strings, got {type(target).__name__}"
        )
    refs: List[List[str]] = []
    for i, t in enumerate(target):
        if isinstance(t, str) or not isinstance(t, (list, tuple)) or not all(isinstance(x, str) for x in t):
            raise TypeError(f"target: expected a sequence of strings for prediction {i}, got {type(t).__name__}")
        if not t:
            raise ValueError(f"target: prediction {i} has no reference (expected at least one)")
        refs.append(list(t))
    if len(refs) != len(preds):
        raise ValueError(f"target: expected {len(preds)} entries (one per entry of preds), got {len(refs)}")
    return list(preds), refs


def tokenize(
    text: str,
    stem: Optional[Callable[[str], str]],
    normalizer: Optional[Callable[[str], str]],
    tokenizer: Optional[Callable[[str], Sequence[str]]],
) -> List[str]:
    text = normalizer(text) if callable(normalizer) else re.sub(r"[^a-z0-9]+", " ", text.lower())
    tokens = list(tokenizer(text)) if callable(tokenizer) else re.split(r"\s+", text)
    if stem is not None:
        tokens = [stem(x) if len(x) > 3 else x for x in tokens]
    return [x for x in tokens if isinstance(x, str) and len(x) > 0]


def _scores(hits: int, pred_len: int, target_len: int) -> Triple:
    precision, recall = hits / pred_len, hits / target_len
    if precision == 0.0 and recall == 0.0:
        return _ZERO
    return 2 * precision * recall / (precision + recall), precision, recall


def _ngrams(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def rouge_n(pred: Sequence[str], target: Sequence[str], n: int) -> Triple:
    p, t = _ngrams(pred, n), _ngrams(target, n)
    pred_len, target_len = sum(p.values()), sum(t.values())
    if pred_len == 0 or target_len == 0:
        return _ZERO
    return _scores(sum(min(c, t[g]) for g, c in p.items()), pred_len, target_len)


def _lcs_positions(pred: Sequence[str], target: Sequence[str]) -> List[int]:
    """Positions in ``target`` of one LCS of pred and target (torchmetrics' backtracking: on a
    non-match it steps back in pred only when that keeps a strictly longer LCS)."""
    table = [[0] * (len(pred) + 1) for _ in range(len(target) + 1)]
    for i in range(1, len(target) + 1):
        for j in range(1, len(pred) + 1):
            if target[i - 1] == pred[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    i, j, picked = len(pred), len(target), []
    while i > 0 and j > 0:
        if pred[i - 1] == target[j - 1]:
            picked.append(j - 1)
            i, j = i - 1, j - 1
        elif table[j][i - 1] > table[j - 1][i]:
            i -= 1
        else:
            j -= 1
    return picked


def rouge_lsum(pred: Sequence[Sequence[str]], target: Sequence[Sequence[str]]) -> Triple:
    pred_len, target_len = sum(map(len, pred)), sum(map(len, target))
    if pred_len == 0 or target_len == 0:
        return _ZERO
    pred_left = Counter(tok for sentence in pred for tok in sentence)
    target_left = Counter(tok for sentence in target for tok in sentence)
    hits = 0
    for sentence in target:
        union = sorted(set().union(*(_lcs_positions(p, sentence) for p in pred)))
        for token in (sentence[k] for k in union):
            if pred_left[token] > 0 and target_left[token] > 0:
                hits += 1
                pred_left[token] -= 1
                target_left[token] -= 1
    return _scores(hits, pred_len, target_len)


def _lcs_lengths(pairs: List[Tuple[List[str], List[str]]]) -> List[int]:
    """The LCS length of each (pred, target) token pair, in one kernel call."""
    vocab: Dict[str, int] = {}
    a: List[int] = []
    b: List[int] = []
    ao, bo = [0], [0]
    for pred, target in pairs:
        a.extend(vocab.setdefault(tok, len(vocab)) for tok in pred)
        b.extend(vocab.setdefault(tok, len(vocab)) for tok in target)
        ao.append(len(a))
        bo.append(len(b))
    out = torch.zeros(len(pairs), dtype=torch.int64)
    i64 = torch.int64
    text_lcs.lcs(
        out,
        torch.tensor(a, dtype=i64),
        torch.tensor(ao, dtype=i64),
        torch.tensor(b, dtype=i64),
        torch.tensor(bo, dtype=i64),
    )
    return out.tolist()


def _as_float32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def _accumulate(triples: List[Triple], accumulate: str) -> Triple:
    if accumulate == "best":
        best = max(range(len(triples)), key=lambda r: (_as_float32(triples[r][0]), -r))
        return triples[best]
    m = len(triples)
    return (sum(t[0] for t in triples) / m, sum(t[1] for t in triples) / m, sum(t[2] for t in triples) / m)


def rouge_batch_sums(
    preds: List[str],
    refs: List[List[str]],
    keys: Tuple[str, ...],
    accumulate: str,
    stem: Optional[Callable[[str], str]],
    normalizer: Optional[Callable[[str], str]],
    tokenizer: Optional[Callable[[str], Sequence[str]]],
) -> Tensor:
    """float64 [len(keys), 3]: the sums over the batch's samples of each key's chosen
    (fmeasure, precision, recall). Raises before returning anything (no state is touched)."""
    values = [ROUGE_KEYS[k] for k in keys]
    want_lsum = "Lsum" in values
    tok = functools.partial(tokenize, stem=stem, normalizer=normalizer, tokenizer=tokenizer)
    pred_tokens = [tok(p) for p in preds]
    ref_tokens = [[tok(r) for r in rs] for rs in refs]
    pred_sentences = [[tok(s) for s in split_sentences(p)] for p in preds] if want_lsum else []
    ref_sentences = [[[tok(s) for s in split_sentences(r)] for r in rs] for rs in refs] if want_lsum else []
    pairs = [(p, r) for p, rs in zip(pred_tokens, ref_tokens) for r in rs]
    lengths = iter(_lcs_lengths([pr for pr in pairs if pr[0] and pr[1]]) if "L" in values else [])
    lcs_scores = (
        [_scores(next(lengths), len(p), len(r)) if p and r else _ZERO for p, r in pairs] if "L" in values else []
    )
    sums = [[0.0, 0.0, 0.0] for _ in keys]
    pair = 0
    for i, (p, rs) in enumerate(zip(pred_tokens, ref_tokens)):
        for k, value in enumerate(values):
            if isinstance(value, int):
                triples = [rouge_n(p, r, value) for r in rs]
            elif value == "L":
                triples = lcs_scores[pair : pair + len(rs)]
            else:
                triples = [rouge_lsum(pred_sentences[i], rsent) for rsent in ref_sentences[i]]
            chosen = _accumulate(triples, accumulate)
            for c in range(3):
                sums[k][c] += chosen[c]
        pair += len(rs)
    return torch.tensor(sums, dtype=torch.float64).reshape(len(keys), 3)
