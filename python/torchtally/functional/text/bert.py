"""bert_score: torchmetrics.functional.text.bert_score's signature and values, without a download.

No C kernel: the language model dominates the cost; the scoring around it is a few torch ops.
"""

import warnings
from collections.abc import Sequence
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import torch
from torch import Tensor
from torch.nn import Module

from . import greedy_matching
from .embedding_models import load_local, local_model_dir, local_tokenizer, sentence_list, tokenize

__all__ = ["bert_score"]

_NO_MODEL = "`model` (an nn.Module) with `user_tokenizer`"


def resolve_model(
    metric: str,
    model_name_or_path: Any,
    model: Optional[Module],
    user_tokenizer: Any,
    device: Optional[Union[str, torch.device]],
    need_tokenizer: bool = True,
) -> Tuple[Module, Any]:
    """The model and tokenizer to use: the caller's, or those saved in a local directory."""
    if model is None:
        tokenizer, model = load_local(local_model_dir(model_name_or_path, metric, _NO_MODEL), False, device)
        return model, (user_tokenizer if user_tokenizer is not None else tokenizer)
    if not isinstance(model, Module):
        raise TypeError(f"{metric}: `model` must be a torch.nn.Module, got {type(model).__name__}")
    model.eval()
    if device is not None:
        model.to(device)
    if user_tokenizer is None and need_tokenizer:
        user_tokenizer = local_tokenizer(local_model_dir(model_name_or_path, metric, "`user_tokenizer` with `model`"))
    return model, user_tokenizer


def baseline_table(rescale_with_baseline: bool, baseline_path: Any, baseline_url: Any) -> Optional[Tensor]:
    """The local baseline table, or an error: torchtally never downloads one."""
    if not rescale_with_baseline:
        return None
    if baseline_path is None:
        where = f"`baseline_url`={baseline_url!r} is not read: " if baseline_url else ""
        raise ValueError(
            f"rescale_with_baseline=True: {where}torchtally never downloads a baseline; pass `baseline_path`, "
            "a local csv/tsv file in bert_score's format (header row, then layer,P,R,F per layer)"
        )
    return greedy_matching.load_baseline(baseline_path)


def model_hash(model_name_or_path: Any, num_layers: Optional[int], idf: bool) -> str:
    """torchmetrics' hash string of the settings."""
    return f"{model_name_or_path}_L{num_layers}{'_idf' if idf else '_no-idf'}"


def empty_result(return_hash: bool, model_name_or_path: Any, num_layers: Optional[int], idf: bool) -> Dict[str, Any]:
    """torchmetrics' result over no sentences, with its warning."""
    warnings.warn("Predictions and references are empty.", UserWarning, stacklevel=3)
    out: Dict[str, Any] = {"precision": [0.0], "recall": [0.0], "f1": [0.0]}
    if return_hash:
        out["hash"] = model_hash(model_name_or_path, num_layers, idf)
    return out


def bert_score(
    preds: Union[str, Sequence[str], Dict[str, Tensor]],
    target: Union[str, Sequence[str], Sequence[Sequence[str]], Dict[str, Tensor]],
    model_name_or_path: Optional[str] = None,
    num_layers: Optional[int] = None,
    all_layers: bool = False,
    model: Optional[Module] = None,
    user_tokenizer: Any = None,
    user_forward_fn: Optional[Callable[[Module, Dict[str, Tensor]], Tensor]] = None,
    verbose: bool = False,
    idf: bool = False,
    device: Optional[Union[str, torch.device]] = None,
    max_length: int = 512,
    batch_size: int = 64,
    num_threads: int = 0,
    return_hash: bool = False,
    lang: str = "en",
    rescale_with_baseline: bool = False,
    baseline_path: Optional[str] = None,
    baseline_url: Optional[str] = None,
    truncation: bool = False,
) -> Dict[str, Union[Tensor, List[float], str]]:
    """BERTScore: precision, recall and F1 of greedy cosine matches between the contextual token
    embeddings of each predicted sentence and its reference(s) (torchmetrics' signature and values).

    The model: ``model`` (an ``nn.Module``) with ``user_tokenizer`` (a ``transformers``
    tokenizer; ``user_forward_fn(model, batch)`` for a model that is not a ``transformers`` one),
    or ``model_name_or_path``, a local directory written by ``save_pretrained``. Nothing is
    downloaded: without either, or with a name that is not a local directory, a ValueError says
    what to pass (torchmetrics downloads roberta-large). ``rescale_with_baseline`` needs
    ``baseline_path``, a local file (``baseline_url`` is never read).

    Returns ``{"precision", "recall", "f1"}``: one value per prediction ([layers, N] with
    ``all_layers``); with several references per prediction, the best over them. ``idf``
    weights tokens by their inverse document frequency over the references given.
    ``verbose`` and ``num_threads`` are accepted and do nothing (no progress bar, no loader).
    No C kernel: the model dominates the cost.

        >>> import os, tempfile, torch
        >>> from transformers import BertConfig, BertModel, BertTokenizer
        >>> from torchtally.functional.text import bert_score
        >>> folder = tempfile.mkdtemp()
        >>> words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "there", "general", "master", "kenobi"]
        >>> with open(os.path.join(folder, "vocab.txt"), "w") as f:
        ...     _ = f.write("\\n".join(words))
        >>> tokenizer = BertTokenizer(os.path.join(folder, "vocab.txt"))
        >>> _ = torch.manual_seed(0)
        >>> config = BertConfig(vocab_size=10, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        ...                     intermediate_size=16)
        >>> model = BertModel(config)
        >>> score = bert_score(["hello there", "general kenobi"], ["hello there", "master kenobi"],
        ...                    model=model, user_tokenizer=tokenizer)
        >>> score["f1"][0].item()  # the same sentence: 1
        1.0
        >>> score["f1"].shape
        torch.Size([2])
    """
    if not isinstance(idf, bool):
        raise ValueError(f"Expected argument `idf` to be a boolean, but got {idf}.")
    model, tokenizer = resolve_model(
        "bert_score", model_name_or_path, model, user_tokenizer, device, not isinstance(preds, dict)
    )
    greedy_matching.check_num_layers(model, num_layers)
    greedy_matching.num_columns(model, all_layers, user_forward_fn)
    if isinstance(preds, dict) and isinstance(target, dict):
        preds_in, target_in = preds, target
        groups = torch.ones(preds["input_ids"].shape[0], dtype=torch.int64)
        if groups.numel() != target["input_ids"].shape[0]:
            raise ValueError("Expected number of predicted and reference sentences to be the same")
    else:
        preds_list = sentence_list(preds, "preds")
        if not isinstance(target, (str, Sequence)):
            raise TypeError(
                f"target: expected a str, or a sequence of str (or of lists of str), got {type(target).__name__}"
            )
        target_list = [target] if isinstance(target, str) else list(target)
        flat_preds, flat_target, groups = greedy_matching.flatten_references(preds_list, target_list)
        if not flat_preds:
            return empty_result(return_hash, model_name_or_path, num_layers, idf)
        preds_in = tokenize(tokenizer, flat_preds, max_length, truncation, own=False)
        target_in = tokenize(tokenizer, flat_target, max_length, truncation, own=False)
    baseline = baseline_table(rescale_with_baseline, baseline_path, baseline_url)
    rows = greedy_matching.pair_rows(
        model, preds_in, target_in, num_layers, all_layers, user_forward_fn, batch_size, device
    )
    scores = greedy_matching.precision_recall_f1(
        rows["pred_tokens"], rows["pred_best"], rows["target_tokens"], rows["target_best"], rows["lengths"], idf
    )
    if baseline is not None:
        scores = greedy_matching.rescale(scores, baseline, num_layers, all_layers)
    grouped = not bool((groups == 1).all())
    out: Dict[str, Any] = greedy_matching.result(
        greedy_matching.best_of_groups(scores, groups), grouped, all_layers, rows["pred_best"].dtype
    )
    if return_hash:
        out["hash"] = model_hash(model_name_or_path, num_layers, idf)
    return out
