"""infolm: torchmetrics.functional.text.infolm's signature and values, from a local model only.

No C kernel: the masked language model dominates the cost (one forward pass per token position).
"""

import os
from collections.abc import Sequence
from typing import Any, Dict, List, Optional, Tuple, Union

import torch
from torch import Tensor
from torch.nn import functional as F  # noqa: N812

from .embedding_models import (
    attended_rows,
    check_token_ids,
    document_frequency_idf,
    load_local,
    local_model_dir,
    lookup_idf,
    model_device,
    padded,
    sentence_list,
    tokenize,
)
from .information_measures import check_measure, information_measure

__all__ = ["infolm"]


def load_masked_lm(
    metric: str, model_name_or_path: Any, device: Optional[Union[str, torch.device]], max_length: Optional[int]
) -> Tuple[Any, Any, int, Dict[str, int]]:
    """The tokenizer and masked language model saved in a local directory, the maximum length
    and the special token ids (pad, sep, cls, mask)."""
    what = "`model_name_or_path`, a local directory holding a masked language model and its tokenizer"
    tokenizer, model = load_local(local_model_dir(model_name_or_path, metric, what), True, device)
    if max_length is None:
        max_length = getattr(model.config, "max_length", None)
        if not isinstance(max_length, int):
            raise ValueError(
                f"{metric}: pass `max_length` (this model's config has no max_length; torchmetrics reads "
                "`model.config.max_length`, 20 under transformers 4)"
            )
    if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1:
        raise ValueError(f"Expected `max_length` to be an int >= 1, got {max_length!r}")
    special = {
        "pad": tokenizer.pad_token_id,
        "sep": tokenizer.sep_token_id,
        "cls": tokenizer.cls_token_id,
        "mask": tokenizer.mask_token_id,
    }
    if special["mask"] is None:
        raise ValueError(f"{metric}: the tokenizer has no mask token; InfoLM needs a masked language model's")
    return tokenizer, model, max_length, special


def token_rows(tokenizer: Any, text: List[str], max_length: int) -> Tuple[Tensor, Tensor]:
    """Every sentence's attended token ids (truncated to ``max_length``, as torchmetrics), flat,
    and the number of each."""
    if not text:
        return torch.empty(0, dtype=torch.int64), torch.empty(0, dtype=torch.int64)
    tokens = tokenize(tokenizer, text, max_length, truncation=True, own=False)
    check_token_ids(tokens["input_ids"], "tokenizer")
    return attended_rows(tokens["input_ids"], tokens["attention_mask"])


def _special_mask(ids: Tensor, special: Dict[str, int]) -> Tensor:
    out = torch.ones_like(ids, dtype=torch.bool)
    for key in ("pad", "sep", "cls"):
        if special[key] is not None:
            out &= ids != special[key]
    return out


def distributions(
    model: Any, tokens: Tensor, lengths: Tensor, special: Dict[str, int], temperature: float, idf: bool, batch_size: int
) -> Tensor:
    """Each sentence's distribution over the vocabulary: the mean over its non-special tokens
    (idf-weighted with ``idf``, df over these sentences) of the model's softmax(logits /
    temperature) at that position when it is masked. [N, vocab] float32."""
    n = int(lengths.numel())
    weights = lookup_idf(tokens, *document_frequency_idf(tokens, lengths), n).float() if idf else None
    offsets = torch.cumsum(lengths, 0) - lengths
    device = model_device(model)
    out: List[Tensor] = []
    with torch.no_grad():
        for start in range(0, n, batch_size):
            lens = lengths[start : start + batch_size]
            first, last = int(offsets[start]), int(offsets[start] + lens.sum())
            ids, mask = padded(tokens[first:last], lens, special["pad"])
            weight = _special_mask(ids, special).float()
            if weights is not None:
                w_idf = torch.zeros(mask.shape)
                w_idf[mask.bool()] = weights[first:last]
                weight = weight * w_idf
            ids, mask = ids.to(device), mask.to(device)
            total = None
            for position in range(ids.shape[1]):
                masked = ids.clone()
                masked[:, position] = special["mask"]
                logits = model(masked, mask).logits[:, position, :]
                probs = F.softmax(logits / temperature, dim=-1).cpu() * weight[:, position : position + 1]
                total = probs if total is None else total + probs
            assert total is not None
            out.append(total / weight.sum(1, keepdim=True))
    return torch.cat(out) if out else torch.empty(0, 0)


def sentence_scores(
    model: Any,
    sides: Tuple[Tuple[Tensor, Tensor], Tuple[Tensor, Tensor]],
    special: Dict[str, int],
    temperature: float,
    idf: bool,
    name: str,
    alpha: Optional[float],
    beta: Optional[float],
    batch_size: int,
) -> Tensor:
    """The information measure of every (prediction, reference) pair, [N] float32."""
    (p_tokens, p_lengths), (t_tokens, t_lengths) = sides
    if p_lengths.numel() == 0:
        return torch.empty(0)
    preds_distribution = distributions(model, p_tokens, p_lengths, special, temperature, idf, batch_size)
    target_distribution = distributions(model, t_tokens, t_lengths, special, temperature, idf, batch_size)
    return information_measure(name, preds_distribution, target_distribution, alpha, beta)


def check_options(temperature: Any, idf: Any, batch_size: Any) -> None:
    """InfoLM's numeric options, or a ValueError naming the one that is wrong."""
    if not isinstance(temperature, (int, float)) or isinstance(temperature, bool) or not temperature > 0:
        raise ValueError(f"Expected `temperature` to be a number > 0, got {temperature!r}")
    if not isinstance(idf, bool):
        raise ValueError(f"Expected `idf` to be a bool, got {idf!r}")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"Expected `batch_size` to be an int >= 1, got {batch_size!r}")


def infolm(
    preds: Union[str, Sequence[str]],
    target: Union[str, Sequence[str]],
    model_name_or_path: Union[str, "os.PathLike[str]"] = "bert-base-uncased",
    temperature: float = 0.25,
    information_measure: str = "kl_divergence",
    idf: bool = True,
    alpha: Optional[float] = None,
    beta: Optional[float] = None,
    device: Optional[Union[str, torch.device]] = None,
    max_length: Optional[int] = None,
    batch_size: int = 64,
    num_threads: int = 0,
    verbose: bool = True,
    return_sentence_level_score: bool = False,
) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """InfoLM: an information measure between the masked language model's distributions over
    the vocabulary of each predicted sentence and its reference, averaged over the sentences
    (torchmetrics' signature and values).

    ``model_name_or_path`` must be a local directory written by ``save_pretrained`` (a masked
    language model and its tokenizer): nothing is downloaded; torchmetrics' default
    "bert-base-uncased" gives a ValueError saying so. ``max_length`` defaults to the model
    config's ``max_length`` (which transformers 5 configs no longer have: pass it). ``idf``
    weights tokens by their inverse document frequency among the predictions (resp. the
    references). ``verbose`` and ``num_threads`` are accepted and unused. Measures:
    kl_divergence, alpha_divergence, beta_divergence, ab_divergence, renyi_divergence (alpha,
    beta: floats, as torchmetrics), l1_distance, l2_distance, l_infinity_distance,
    fisher_rao_distance. No C kernel: the model dominates the cost.

        >>> import os, tempfile, torch
        >>> from transformers import BertConfig, BertForMaskedLM, BertTokenizer
        >>> from torchtally.functional.text import infolm
        >>> folder = tempfile.mkdtemp()
        >>> words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "he", "read", "the", "book", "history"]
        >>> with open(os.path.join(folder, "vocab.txt"), "w") as f:
        ...     _ = f.write("\\n".join(words))
        >>> _ = torch.manual_seed(0)
        >>> config = BertConfig(vocab_size=10, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        ...                     intermediate_size=16)
        >>> BertForMaskedLM(config).save_pretrained(folder)
        >>> BertTokenizer(os.path.join(folder, "vocab.txt")).save_pretrained(folder)
        ('...
        >>> score = infolm(["he read the book"], ["he read the book"], model_name_or_path=folder, max_length=16)
        >>> abs(score.item()) < 1e-6  # the same sentence: no divergence
        True
    """
    check_options(temperature, idf, batch_size)
    name = check_measure(information_measure, alpha, beta)
    tokenizer, model, max_length, special = load_masked_lm("infolm", model_name_or_path, device, max_length)
    preds_list, target_list = sentence_list(preds, "preds"), sentence_list(target, "target")
    if len(preds_list) != len(target_list):
        raise ValueError(
            "preds, target: Expected as many predicted as reference sentences, got "
            f"{len(preds_list)} and {len(target_list)}"
        )
    sides = (token_rows(tokenizer, preds_list, max_length), token_rows(tokenizer, target_list, max_length))
    scores = sentence_scores(model, sides, special, temperature, idf, name, alpha, beta, batch_size)
    if return_sentence_level_score:
        return scores.mean(), scores
    return scores.mean()
