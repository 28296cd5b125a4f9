"""BERTScore's two halves: per sentence pair, every token's best cosine similarity with the
other sentence (at update, where the model runs once per sentence), and precision, recall and F1
from those (at compute, where idf weights need every reference of the data set).

A pair's token rows: the attended token ids of the prediction and of the reference, each id
kept as is when the token is scored and as ``-id - 1`` when it is not (the first token and the
last attended one: [CLS] and [SEP], as torchmetrics), and per token its best cosine with any
token of the other sentence, one column per layer used. torchmetrics takes that maximum over
the other sentence's padded positions too, whose embeddings it zeroes: the best is never below
0, kept so here.
"""

import csv
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
from torch import Tensor

from .embedding_models import check_token_ids, document_frequency_idf, lookup_idf, model_device

__all__: List[str] = []

_F64 = torch.float64


def check_num_layers(model: Any, num_layers: Optional[int]) -> None:
    """``num_layers`` must not exceed the model's ``config.num_hidden_layers`` (as torchmetrics)."""
    if num_layers is not None and (not isinstance(num_layers, int) or isinstance(num_layers, bool) or num_layers < 0):
        raise ValueError(f"Expected `num_layers` to be None or an int >= 0, got {num_layers!r}")
    layers = getattr(getattr(model, "config", None), "num_hidden_layers", None)
    if isinstance(layers, int) and num_layers and num_layers > layers:
        raise ValueError(f"num_layers={num_layers} is forbidden for this model. Please use num_layers <= {layers}")


def num_columns(model: Any, all_layers: bool, user_forward_fn: Optional[Callable[..., Tensor]]) -> int:
    """How many layers a token's best-cosine row holds: 1, or every hidden state (all_layers)."""
    if not all_layers:
        return 1
    if user_forward_fn is not None:
        raise ValueError("The option `all_layers=True` can be used only with default `transformers` models.")
    layers = getattr(getattr(model, "config", None), "num_hidden_layers", None)
    if not isinstance(layers, int):
        raise ValueError("`all_layers=True` needs a `transformers` model whose config has `num_hidden_layers`")
    return layers + 1


def scored_positions(mask: Tensor) -> Tensor:
    """torchmetrics' processed attention mask: the attention mask without the first position and
    the last attended one ([CLS] and [SEP] for a ``transformers`` tokenizer)."""
    out = mask.clone()
    out[:, 0] = 0
    last = torch.cumsum(out - 0.1, dim=-1).argmax(-1)
    out[torch.arange(out.size(0)), last] = 0
    return out


def _embeddings(
    model: Any,
    ids: Tensor,
    mask: Tensor,
    num_layers: Optional[int],
    all_layers: bool,
    user_forward_fn: Optional[Callable[..., Tensor]],
) -> Tensor:
    """Unit-length token embeddings [B, L, S, D] of one batch."""
    if user_forward_fn is not None:
        out = user_forward_fn(model, {"input_ids": ids, "attention_mask": mask})
        if not isinstance(out, Tensor) or out.dim() != 3 or tuple(out.shape[:2]) != tuple(ids.shape[:2]):
            shape = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
            raise ValueError(
                "The model output must be `Tensor` of a shape `[batch_size, seq_len, model_dim]` "
                f"i.e. [{ids.shape[0]}, {ids.shape[1]}, `model_dim`], but got {shape}."
            )
        out = out.unsqueeze(1)
    else:
        states = model(ids, mask, output_hidden_states=True).hidden_states
        out = torch.stack(list(states), 1) if all_layers else states[num_layers if num_layers is not None else -1]
        out = out if all_layers else out.unsqueeze(1)
    return out / out.norm(dim=-1, keepdim=True)


def pair_rows(
    model: Any,
    preds: Dict[str, Tensor],
    target: Dict[str, Tensor],
    num_layers: Optional[int],
    all_layers: bool,
    user_forward_fn: Optional[Callable[..., Tensor]],
    batch_size: int,
    device: Optional[Any] = None,
) -> Dict[str, Tensor]:
    """The token rows (module docstring) of every (prediction, reference) pair, on the CPU:
    ``pred_tokens`` / ``target_tokens`` (int64, encoded ids), ``pred_best`` / ``target_best``
    ([tokens, layers] float32) and ``lengths`` ([pairs, 2] int64: tokens of each)."""
    check_token_ids(preds["input_ids"], "preds")
    check_token_ids(target["input_ids"], "target")
    if preds["input_ids"].shape[0] != target["input_ids"].shape[0]:
        raise ValueError("Expected as many predicted as reference sentences")
    for name, side in (("preds", preds), ("target", target)):
        if bool((side["input_ids"] < 0).any()):
            raise ValueError(f"{name}: token ids must be >= 0")
    run_on = torch.device(device) if device is not None else model_device(model)
    parts: Dict[str, List[Tensor]] = {
        k: [] for k in ("pred_tokens", "pred_best", "target_tokens", "target_best", "lengths")
    }
    n = preds["input_ids"].shape[0]
    with torch.no_grad():
        for start in range(0, n, batch_size):
            sides = []
            for side in (preds, target):
                mask = side["attention_mask"][start : start + batch_size]
                width = max(int(mask.sum(1).max()), 1) if mask.numel() else 1
                mask = mask[:, :width]
                ids = side["input_ids"][start : start + batch_size, :width]
                emb = _embeddings(model, ids.to(run_on), mask.to(run_on), num_layers, all_layers, user_forward_fn)
                scored = scored_positions(mask)
                emb = emb * scored.to(run_on, emb.dtype)[:, None, :, None]
                sides.append((ids, mask, scored, emb))
            cos = torch.einsum("blpd,blrd->blpr", sides[0][3], sides[1][3])
            bests = (cos.max(3).values, cos.max(2).values)  # [B, L, P] and [B, L, R]
            lengths = []
            for key, (ids, mask, scored, _), best in zip(("pred", "target"), sides, bests):
                keep = mask.bool()
                tokens = ids[keep].to(torch.int64)
                parts[f"{key}_tokens"].append(torch.where(scored[keep].bool(), tokens, -tokens - 1))
                parts[f"{key}_best"].append(best.permute(0, 2, 1)[keep.to(best.device)].float().cpu())
                lengths.append(keep.sum(1).to(torch.int64))
            parts["lengths"].append(torch.stack(lengths, 1))
    return {k: torch.cat(v) if v else torch.empty(0) for k, v in parts.items()}


def _weighted_mean(best: Tensor, weight: Tensor, lengths: Tensor) -> Tensor:
    """Per sentence, sum(weight * best) / sum(weight) per layer: [L, N] float64 (0/0 is NaN, as
    torchmetrics' normalised weights of a sentence with nothing scored)."""
    n, layers = lengths.numel(), best.shape[1]
    sentence = torch.repeat_interleave(torch.arange(n), lengths)
    num = torch.zeros(n, layers, dtype=_F64).index_add_(0, sentence, best.to(_F64) * weight.unsqueeze(1))
    den = torch.zeros(n, dtype=_F64).index_add_(0, sentence, weight)
    return (num / den.unsqueeze(1)).T


def precision_recall_f1(
    pred_tokens: Tensor, pred_best: Tensor, target_tokens: Tensor, target_best: Tensor, lengths: Tensor, idf: bool
) -> Tuple[Tensor, Tensor, Tensor]:
    """Precision, recall and F1 [L, N] (float64) of N pairs' token rows. With ``idf``, tokens
    are weighted by ``log((N + 1) / (df + 1))``, df over the N references (torchmetrics')."""
    p_scored, t_scored = pred_tokens >= 0, target_tokens >= 0
    if idf:
        p_ids = torch.where(p_scored, pred_tokens, -pred_tokens - 1)
        t_ids = torch.where(t_scored, target_tokens, -target_tokens - 1)
        n = lengths.shape[0]
        table = document_frequency_idf(t_ids, lengths[:, 1])
        p_weight = lookup_idf(p_ids, *table, n) * p_scored
        t_weight = lookup_idf(t_ids, *table, n) * t_scored
    else:
        p_weight, t_weight = p_scored.to(_F64), t_scored.to(_F64)
    precision = _weighted_mean(pred_best, p_weight, lengths[:, 0])
    recall = _weighted_mean(target_best, t_weight, lengths[:, 1])
    f1 = (2 * precision * recall / (precision + recall)).nan_to_num(nan=0.0, posinf=torch.inf, neginf=-torch.inf)
    return precision, recall, f1


def load_baseline(baseline_path: Any) -> Tensor:
    """The baseline table of a local csv/tsv file (bert_score's format: a header row, then one row
    per layer: layer, P, R, F) as [layers, 3]."""
    with open(baseline_path) as handle:
        rows = [[float(item) for item in row] for idx, row in enumerate(csv.reader(handle)) if idx > 0]
    table = torch.tensor(rows, dtype=_F64)
    if table.dim() != 2 or table.shape[1] != 4:
        raise ValueError(
            f"`baseline_path`: expected rows of 4 values (layer, P, R, F), got a table of {tuple(table.shape)}"
        )
    return table[:, 1:]


def rescale(
    scores: Tuple[Tensor, Tensor, Tensor], baseline: Tensor, num_layers: Optional[int], all_layers: bool
) -> Tuple[Tensor, Tensor, Tensor]:
    """(score - b) / (1 - b) with the baseline's row of the layer used (every row: all_layers)."""
    stacked = torch.stack(scores, -1)  # [L, N, 3]
    base = baseline.unsqueeze(1) if all_layers else baseline[num_layers if num_layers is not None else -1]
    out = (stacked - base) / (1 - base)
    return out[..., 0], out[..., 1], out[..., 2]


def best_of_groups(scores: Tuple[Tensor, Tensor, Tensor], groups: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """Per prediction, the best over its references (``groups``: references per prediction)."""
    if bool((groups == 1).all()):
        return scores
    bounds = torch.cumsum(groups, 0).tolist()
    starts = [0, *bounds[:-1]]
    return tuple(torch.stack([s[:, a:b].max(1).values for a, b in zip(starts, bounds)], 1) for s in scores)  # type: ignore[return-value]


def result(
    scores: Tuple[Tensor, Tensor, Tensor], grouped: bool, all_layers: bool, dtype: torch.dtype
) -> Dict[str, Tensor]:
    """torchmetrics' output: [N] per pair ([layers, N] with all_layers); a single pair's squeezed
    to 0-d ([layers]) unless references were grouped."""
    out = {}
    for key, value in zip(("precision", "recall", "f1"), scores):
        value = value if all_layers else value[0]
        out[key] = (value if grouped else value.squeeze()).to(dtype)
    return out


def flatten_references(preds: List[str], target: List[Any]) -> Tuple[List[str], List[str], Tensor]:
    """Predictions repeated once per reference, the references flat, and the number of
    references of each prediction (torchmetrics' multi-reference input: a target item may be a
    list or tuple of str)."""
    if len(preds) != len(target):
        raise ValueError(
            "preds, target: Expected number of predicted and reference sentences to be the same, but got "
            f"{len(preds)} and {len(target)}"
        )
    flat_preds: List[str] = []
    flat_target: List[str] = []
    groups: List[int] = []
    for pred, refs in zip(preds, target):
        refs = list(refs) if isinstance(refs, (list, tuple)) else [refs]
        if not refs or not all(isinstance(r, str) for r in refs):
            raise TypeError("Expected each `target` item to be a str or a non-empty list/tuple of str")
        flat_preds.extend([pred] * len(refs))
        flat_target.extend(refs)
        groups.append(len(refs))
    return flat_preds, flat_target, torch.tensor(groups, dtype=torch.int64)
