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


def check_squad_inputs(preds: Any, target: Any) -> Tuple[Dict[Any, str], List[Tuple[Any, List[str]]]]:
    """torchmetrics' input forms (a dict or a list of dicts; KeyError for a missing key):
    preds {"prediction_text": str, "id": ...}, target {"answers": {"text": [str, ...]}, "id": ...}.
    Returns the predictions by id and each question's (id, answers)."""
    preds = [preds] if isinstance(preds, dict) else preds
    target = [target] if isinstance(target, dict) else target
    for p in preds:
        if not isinstance(p, dict) or "prediction_text" not in p or "id" not in p:
            raise KeyError(
                "preds: expected keys in a single prediction are 'prediction_text' (the answer string) and 'id'"
            )
        if not isinstance(p["prediction_text"], str):
            raise TypeError(f"preds: 'prediction_text' must be a string, got {type(p['prediction_text']).__name__}")
    questions = []
    for t in target:
        if not isinstance(t, dict) or "answers" not in t or "id" not in t:
            raise KeyError(f"target: expected keys in a single target are 'answers' and 'id'. SQuAD format: {_FORMAT}")
        answers = t["answers"]
        if not isinstance(answers, dict) or "text" not in answers:
            raise KeyError(f"target: expected the key 'text' in 'answers'. SQuAD format: {_FORMAT}")
        texts = answers["text"]
        if isinstance(texts, str) or not all(isinstance(x, str) for x in texts):
            raise TypeError(f"target: 'answers' 'text' must be a list of strings, got {texts!r}")
        if len(texts) == 0:
            raise ValueError(f"target: question {t['id']!r} has no answer text (expected at least one)")
        questions.append((t["id"], list(texts)))
    return {p["id"]: p["prediction_text"] for p in preds}, questions


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
