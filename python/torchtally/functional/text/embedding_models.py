"""The language models behind BERTScore and InfoLM: loading them from a local directory (never
from the network), tokenizing sentences, and the per-sentence token rows the metrics keep.

torchtally never downloads: a model comes as an ``nn.Module`` (with a tokenizer), or as a
``model_name_or_path`` that is a local directory written by ``save_pretrained``, loaded with
``local_files_only=True``.
"""

import os
from collections.abc import Sequence
from typing import Any, Dict, List, Optional, Tuple, Union

import torch
from torch import Tensor

__all__: List[str] = []

Sentences = Union[str, Sequence[str]]


def local_model_dir(model_name_or_path: Any, metric: str, what: str) -> str:
    """``model_name_or_path`` as a local directory, or a ValueError saying what to pass."""
    if model_name_or_path is None:
        raise ValueError(
            f"{metric}: no model. torchtally never downloads one: pass {what}, or "
            "`model_name_or_path` = a local directory written by `save_pretrained` (a model and its tokenizer)"
        )
    if not isinstance(model_name_or_path, (str, os.PathLike)) or not os.path.isdir(model_name_or_path):
        raise ValueError(
            f"{metric}: `model_name_or_path`={model_name_or_path!r} is not a local directory. torchtally never "
            f"downloads a model: save it once with `save_pretrained(dir)` (model and tokenizer) and pass that "
            f"directory, or pass {what}"
        )
    return os.fspath(model_name_or_path)


def load_local(path: str, masked_lm: bool, device: Optional[Union[str, torch.device]] = None) -> Tuple[Any, Any]:
    """The tokenizer and model saved in the local directory ``path`` (``AutoModelForMaskedLM``
    when ``masked_lm``, else ``AutoModel``), in eval mode, on ``device`` when given."""
    from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    loader = AutoModelForMaskedLM if masked_lm else AutoModel
    model = loader.from_pretrained(path, local_files_only=True)
    model.eval()
    if device is not None:
        model.to(device)
    return tokenizer, model


def local_tokenizer(path: str) -> Any:
    """The tokenizer saved in the local directory ``path``."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path, local_files_only=True)


def sentence_list(value: Any, name: str) -> List[str]:
    """A str or a sequence of str as a list, or a TypeError naming ``name``."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Sequence) or not all(isinstance(s, str) for s in value):
        raise TypeError(f"Expected `{name}` to be a str or a sequence of str, got {type(value).__name__}")
    return list(value)


def tokenize(tokenizer: Any, text: List[str], max_length: int, truncation: bool, own: bool) -> Dict[str, Tensor]:
    """``input_ids`` and ``attention_mask`` [N, S] of ``text``: a ``transformers`` tokenizer
    (padded to the longest sentence), or a user's own one called as ``tokenizer(text, max_length)``
    (torchmetrics' contract for ``user_tokenizer``)."""
    if own:
        try:
            out = tokenizer(text, max_length)
        except Exception as ex:
            raise RuntimeError(f"Tokenization was not successful: {ex}") from ex
    else:
        limit = {"max_length": max_length, "truncation": True} if truncation else {}
        out = tokenizer(text, padding=True, return_tensors="pt", **limit)
    ids, mask = out["input_ids"], out["attention_mask"]
    if not isinstance(ids, Tensor) or not isinstance(mask, Tensor) or mask.shape != ids.shape[:2]:
        raise ValueError("the tokenizer must return `input_ids` and `attention_mask` tensors of shape [N, S]")
    return {"input_ids": ids, "attention_mask": mask}


def check_token_ids(ids: Tensor, what: str) -> None:
    """Token ids must be integers of shape [N, S] (ids are kept and counted for idf)."""
    if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool or ids.dim() != 2:
        raise TypeError(
            f"{what}: expected integer token ids of shape [N, S], got {ids.dtype} of shape {tuple(ids.shape)}"
        )


def attended_rows(ids: Tensor, mask: Tensor) -> Tuple[Tensor, Tensor]:
    """Every sentence's attended token ids, concatenated, and their counts per sentence."""
    keep = mask.bool()
    return ids[keep].to(torch.int64), keep.sum(1).to(torch.int64)


def padded(tokens: Tensor, lengths: Tensor, pad_id: int) -> Tuple[Tensor, Tensor]:
    """Sentences (flat ``tokens`` cut by ``lengths``) as right-padded ``input_ids`` and
    ``attention_mask`` [N, max length]."""
    n = int(lengths.numel())
    width = int(lengths.max()) if n else 0
    positions = torch.arange(width).expand(n, width)
    mask = positions < lengths.unsqueeze(1)
    ids = torch.full((n, width), pad_id, dtype=torch.int64)
    ids[mask] = tokens
    return ids, mask.to(torch.int64)


def document_frequency_idf(tokens: Tensor, lengths: Tensor) -> Tuple[Tensor, Tensor]:
    """Inverse document frequencies of the corpus of sentences given as flat ``tokens`` cut by
    ``lengths``: the sorted distinct ids and ``log((N + 1) / (df + 1))`` for each (float64), df =
    the number of sentences holding the id. An id in no sentence has ``log(N + 1)`` (see
    ``lookup_idf``)."""
    n = int(lengths.numel())
    sentence = torch.repeat_interleave(torch.arange(n), lengths)
    pairs = torch.unique(torch.stack([tokens, sentence]), dim=1)
    ids, df = torch.unique(pairs[0], return_counts=True)
    idf = torch.log(torch.tensor(float(n + 1), dtype=torch.float64) / (df.to(torch.float64) + 1.0))
    return ids, idf


def lookup_idf(tokens: Tensor, ids: Tensor, idf: Tensor, num_sentences: int) -> Tensor:
    """The idf (float64) of each of ``tokens`` from ``document_frequency_idf``'s table."""
    out = torch.full(tokens.shape, float(torch.log(torch.tensor(num_sentences + 1.0, dtype=torch.float64))))
    out = out.to(torch.float64)
    if ids.numel():
        at = torch.searchsorted(ids, tokens).clamp(max=ids.numel() - 1)
        found = ids[at] == tokens
        out[found] = idf[at[found]]
    return out


def model_device(model: Any) -> torch.device:
    """Where the model's parameters are (CPU for a model without any)."""
    for p in model.parameters():
        return p.device
    return torch.device("cpu")
