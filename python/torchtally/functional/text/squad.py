"""SQuAD (v1.1's official evaluation, as torchmetrics.functional.text.squad): per question the
best exact match and token F1 over its answers, summed; the functional form.

Answers and predictions are lower-cased, stripped of punctuation and of the articles a, an, the,
and their whitespace collapsed; F1 counts the tokens shared by prediction and answer (1 when both
are empty, 0 when one is). A question without a prediction warns and scores 0.
"""

import re
import string
import warnings
from collections import Counter
from typing import Any, Dict, List, Sequence, Tuple, Union

import torch
from torch import Tensor

__all__ = ["squad"]

_FORMAT = (
    "{'answers': {'answer_start': [1], 'text': ['This is a test text']}, 'context': 'This is a test context.', "
    "'id': '1', 'question': 'Is this a test?', 'title': 'train test'}"
)
_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(s: str) -> str:
    s = "".join(ch for ch in s.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", s).split())


def _f1(prediction: str, answer: str) -> float:
    pred = normalize_answer(prediction).split() if prediction else []
    gold = normalize_answer(answer).split() if answer else []
    if not pred or not gold:
        return float(pred == gold)
    same = sum((Counter(gold) & Counter(pred)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def _records(name: str, value: Any) -> List[Any]:
    """A dict or a list (tuple) of dicts, as a list."""
    if isinstance(value, dict):
        return [value]
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name}: expected a dict or a list of dicts, got {type(value).__name__}")
    for i, v in enumerate(value):
        if not isinstance(v, dict):
            raise TypeError(f"{name}[{i}]: expected a dict, got {type(v).__name__}")
    return list(value)


def _missing(name: str, record: Dict[Any, Any], keys: Tuple[str, ...], torchmetrics_says: str) -> None:
    """A KeyError (torchmetrics' type) naming the first absent key, the keys that arrived and, in
    parentheses, torchmetrics' message for code that matches on it."""
    for key in keys:
        if key not in record:
            raise KeyError(
                f"{name}: expected the keys {', '.join(map(repr, keys))}, the key {key!r} is missing "
                f"(got the keys {list(record)}; {torchmetrics_says})"
            )


def check_squad_inputs(preds: Any, target: Any) -> Tuple[Dict[Any, str], List[Tuple[Any, List[str]]]]:
    """torchmetrics' input forms (a dict or a list of dicts; KeyError for a missing key):
    preds {"prediction_text": str, "id": ...}, target {"answers": {"text": [str, ...]}, "id": ...}.
    Returns the predictions by id and each question's (id, answers). Every error names the
    argument, the item and the key."""
    pred_records = _records("preds", preds)
    target_records = _records("target", target)
    for i, p in enumerate(pred_records):
        _missing(
            f"preds[{i}]",
            p,
            ("prediction_text", "id"),
            "Expected keys in a single prediction are 'prediction_text' and 'id'.",
        )
        if not isinstance(p["prediction_text"], str):
            raise TypeError(
                f"preds[{i}]['prediction_text']: expected a string, got {type(p['prediction_text']).__name__}"
            )
    questions = []
    for i, t in enumerate(target_records):
        _missing(
            f"target[{i}]",
            t,
            ("answers", "id"),
            f"Expected keys in a single target are 'answers' and 'id'. SQuAD format: {_FORMAT}",
        )
        answers = t["answers"]
        if not isinstance(answers, dict):
            raise TypeError(
                f"target[{i}]['answers']: expected a dict with the key 'text', got {type(answers).__name__}. "
                f"SQuAD format: {_FORMAT}"
            )
        _missing(
            f"target[{i}]['answers']",
            answers,
            ("text",),
            f"Expected keys in a 'answers' are 'text'. SQuAD format: {_FORMAT}",
        )
        texts = answers["text"]
        if isinstance(texts, str) or not isinstance(texts, (list, tuple)):
            raise TypeError(f"target[{i}]['answers']['text']: expected a list of strings, got {type(texts).__name__}")
        for j, x in enumerate(texts):
            if not isinstance(x, str):
                raise TypeError(f"target[{i}]['answers']['text'][{j}]: expected a string, got {type(x).__name__}")
        if len(texts) == 0:
            raise ValueError(
                f"target[{i}]['answers']['text']: expected at least one answer for question {t['id']!r}, got none"
            )
        questions.append((t["id"], list(texts)))
    return {p["id"]: p["prediction_text"] for p in pred_records}, questions


def squad_batch_sums(preds: Dict[Any, str], questions: Sequence[Tuple[Any, List[str]]]) -> Tuple[float, float, int]:
    """(sum of F1, sum of exact match, questions) of one batch."""
    f1 = em = 0.0
    for qid, answers in questions:
        if qid not in preds:
            warnings.warn(f"Unanswered question {qid} will receive score 0.", UserWarning, stacklevel=3)
            continue
        pred = preds[qid]
        em += max(float(normalize_answer(pred) == normalize_answer(a)) for a in answers)
        f1 += max(_f1(pred, a) for a in answers)
    return f1, em, len(questions)


def squad_result(f1: Tensor, exact_match: Tensor, total: Tensor, dtype: torch.dtype) -> Dict[str, Tensor]:
    """{"exact_match": 100 * em / total, "f1": 100 * f1 / total} (NaN over no question)."""
    n = int(total)
    scale = 100.0 / n if n else float("nan")
    return {"exact_match": (exact_match * scale).to(dtype), "f1": (f1 * scale).to(dtype)}


def squad(
    preds: Union[Dict[str, str], List[Dict[str, str]]], target: Union[Dict[str, Any], List[Dict[str, Any]]]
) -> Dict[str, Tensor]:
    """SQuAD exact match and F1 (percent) of predictions against the questions' answers.

    Differences from torchmetrics: float64 sums; a question with an empty answer list raises
    ValueError (torchmetrics: a bare ``max()`` error), a non-string answer TypeError.

        >>> from torchtally.functional.text import squad
        >>> preds = [{"prediction_text": "1976", "id": "56e10a3be3433e1400422b22"}]
        >>> target = [{"answers": {"answer_start": [97], "text": ["1976"]}, "id": "56e10a3be3433e1400422b22"}]
        >>> squad(preds, target)
        {'exact_match': tensor(100.), 'f1': tensor(100.)}
    """
    by_id, questions = check_squad_inputs(preds, target)
    f1, em, n = squad_batch_sums(by_id, questions)
    f64 = torch.float64
    return squad_result(torch.tensor(f1, dtype=f64), torch.tensor(em, dtype=f64), torch.tensor(n), torch.float32)
