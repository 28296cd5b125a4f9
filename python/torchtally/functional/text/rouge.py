"""ROUGE's functional form and its result from the sums (torchmetrics.functional.text.rouge_score)."""

from typing import Callable, Dict, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

from . import summary_overlap as ru

__all__ = ["rouge_score"]


def rouge_result(sums: Tensor, count: Tensor, keys: Tuple[str, ...], dtype: torch.dtype) -> Dict[str, Tensor]:
    """{"rouge1_fmeasure": mean, "rouge1_precision": ..., ...} from float64 sums [K, 3] and the
    number of samples (NaN over none, as torchmetrics)."""
    n = int(count)
    means = sums / n if n else torch.full_like(sums, float("nan"))
    out: Dict[str, Tensor] = {}
    for k, key in enumerate(keys):
        for c, column in enumerate(ru.COLUMNS):
            out.setdefault(f"{key}_{column}", means[k, c].to(dtype))
    return out


def rouge_score(
    preds: Union[str, Sequence[str]],
    target: Union[str, Sequence[str], Sequence[Sequence[str]]],
    accumulate: str = "best",
    use_stemmer: bool = False,
    normalizer: Optional[Callable[[str], str]] = None,
    tokenizer: Optional[Callable[[str], Sequence[str]]] = None,
    rouge_keys: Union[str, Tuple[str, ...]] = ("rouge1", "rouge2", "rougeL", "rougeLsum"),
) -> Dict[str, Tensor]:
    """ROUGE (rouge-score's definitions): per key in ``rouge_keys`` the mean over predictions of
    fmeasure, precision and recall against their references (see torchtally.text.ROUGEScore).

    Differences from torchmetrics: ``rougeLsum`` without nltk's punkt data raises OSError
    saying how to install it (torchmetrics downloads it at run time); preds and target of
    different lengths, or a prediction without a reference, raise ValueError; float64 sums.

        >>> from torchtally.functional.text import rouge_score
        >>> scores = rouge_score("My name is John", "Is your name John", rouge_keys=("rouge1", "rougeL"))
        >>> {k: round(float(v), 4) for k, v in scores.items()}  # doctest: +NORMALIZE_WHITESPACE
        {'rouge1_fmeasure': 0.75, 'rouge1_precision': 0.75, 'rouge1_recall': 0.75,
         'rougeL_fmeasure': 0.5, 'rougeL_precision': 0.5, 'rougeL_recall': 0.5}
    """
    keys = ru.check_rouge_keys(rouge_keys)
    ru.check_accumulate(accumulate)
    stem = ru.make_stemmer(use_stemmer)
    preds_list, refs = ru.as_pairs(preds, target)
    sums = ru.rouge_batch_sums(preds_list, refs, keys, accumulate, stem, normalizer, tokenizer)
    return rouge_result(sums, torch.tensor(len(preds_list)), keys, torch.get_default_dtype())
