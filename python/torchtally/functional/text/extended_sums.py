"""ExtendedEditDistance's update: each sentence's text prepared as torchmetrics (and the EED
authors' util.py) does for its language, then per sentence the lowest EED over its references
(kernel eed_sentences, csrc/API.md) in float64."""

import re
import unicodedata
from typing import Tuple

import torch
from torch import Tensor

from ...kernels.text import ter as text_ter
from . import packing, reference_groups

Costs = Tuple[float, float, float, float]  # alpha, rho, deletion, insertion

_SPLIT = ((".", " ."), ("!", " !"), ("?", " ?"), (",", " ,"))
_RULES = (
    (re.compile(r"\s+"), r" "),
    (re.compile(r"(\d) ([.,]) (\d)"), r"\1\2\3"),  # 0 . 1 -> 0.1
    (re.compile(r"(Dr|Jr|Prof|Rev|Gen|Mr|Mt|Mrs|Ms) ."), r"\1."),  # Mr . -> Mr.
)
_JOIN = (("e . g .", "e.g."), ("i . e .", "i.e."), ("U . S .", "U.S."))


def check_language(language: object) -> str:
    if language not in ("en", "ja"):
        raise ValueError(f"language: expected 'en' or 'ja', got {language!r}")
    return str(language)


def check_costs(alpha: object, rho: object, deletion: object, insertion: object) -> Costs:
    """Non-negative finite floats (torchmetrics refuses ints too: a ValueError naming each)."""
    values = (alpha, rho, deletion, insertion)
    for name, v in zip(("alpha", "rho", "deletion", "insertion"), values):
        if not isinstance(v, float) or not 0.0 <= v < float("inf"):
            raise ValueError(f"{name}: expected a non-negative finite float, got {v!r}")
    return values  # type: ignore[return-value]


def prepared(sentence: str, language: str) -> str:
    """The text EED compares: English with punctuation split off and spaces around it; Japanese
    NFKC-normalised."""
    sentence = sentence.rstrip()
    if language == "ja":
        return unicodedata.normalize("NFKC", sentence)
    for a, b in _SPLIT:
        sentence = sentence.replace(a, b)
    for pattern, replacement in _RULES:
        sentence = pattern.sub(replacement, sentence)
    for a, b in _JOIN:
        sentence = sentence.replace(a, b)
    return f" {sentence} "


def sentence_scores(
    preds: reference_groups.Preds, target: reference_groups.Target, language: str, costs: Costs
) -> Tensor:
    """float64 [N]: per sentence its lowest EED over its references."""
    hyps, groups = reference_groups.sentences(preds, target)
    hyp_codes = [[ord(c) for c in prepared(h, language)] for h in hyps]
    ref_codes = [[[ord(c) for c in prepared(r, language)] for r in rs] for rs in groups]
    out = torch.zeros(len(hyps), dtype=torch.float64)
    text_ter.eed_sentences(out, *packing.pack(hyp_codes, ref_codes), torch.tensor(costs, dtype=torch.float64))
    return out
