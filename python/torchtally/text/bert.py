"""BERTScore: torchmetrics.text.BERTScore's signature and values; the math lives in
torchtally.functional.text (greedy_matching.py). No C kernel: the language model dominates the cost.

State (all "cat" states, synced in the one padded all_gather per dtype: int64 and float32):

* per (prediction, reference) pair, from the model run at ``update`` on that batch: the
  attended token ids of both sentences (8 bytes per token; an unscored [CLS]/[SEP] id kept as
  ``-id - 1``), each token's best cosine similarity with the other sentence (4 bytes per token
  and layer used: 1, or every hidden state with ``all_layers``), and the two token counts (16
  bytes per pair);
* the number of references of each prediction (8 bytes per prediction).

So a sentence of T tokens costs about 12 T bytes (torchmetrics keeps input ids and attention
masks padded to ``max_length``, 2 x 512 x 8 bytes per sentence, and runs the model over the
whole gathered data set on every rank at compute). idf weights need every reference of the data
set; they are computed at compute from the synced token ids, so precision, recall and F1 are
exact with idf on and off, and the same on every rank as in one process over all the data
(torchmetrics #472: its BERTScore failed under DDP).

Deliberate differences from torchmetrics:

* nothing is downloaded: ``model`` + ``user_tokenizer`` (or ``user_forward_fn``), or
  ``model_name_or_path`` a local directory; otherwise a ValueError at construction says what to
  pass (torchmetrics downloads roberta-large). ``rescale_with_baseline`` needs a local
  ``baseline_path`` (``baseline_url`` is never read);
* scores are in the order of the pairs given: torchmetrics sorts sentences by length and then
  indexes the sorted embeddings with the sort permutation instead of its inverse, so where that
  permutation is not its own inverse its scores belong to other pairs;
* several references per prediction are grouped per update, across updates and ranks
  (torchmetrics applies the last update's grouping to all the data);
* the model runs once per sentence, at update (torchmetrics: again at every compute, on every
  rank); precision, recall and F1 are summed in float64 and returned in float32;
* a user tokenizer must return integer token ids (ids are kept for idf); a document frequency
  counts the ids a reference attends to (torchmetrics also counts its padding id).
"""

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Union

import torch
from torch import Tensor
from torch.nn import Module

from ..base.metric import Metric
from ..functional.text import bert as bert_forms
from ..functional.text import greedy_matching
from ..functional.text.embedding_models import sentence_list, tokenize

__all__ = ["BERTScore"]

_DEFAULT_MODEL = "roberta-large"


class _ModelRef:
    """Holds the language model outside the metric's module tree: it is not metric state (no
    ``state_dict`` entry, no sync), and ``.to()`` of the metric leaves it where the caller put it."""

    def __init__(self, model: Module) -> None:
        self.model = model


class BERTScore(Metric):
    """BERTScore: precision, recall and F1 of greedy cosine matches between the contextual token
    embeddings of each predicted sentence and its reference(s).

    ``update(preds, target)``: a sentence or a list of them; a target item may be a list of
    references (the best over them is returned). ``compute()``: ``{"precision", "recall",
    "f1"}``, one value per prediction in update order (rank order across ranks); [layers, N]
    with ``all_layers``. The model: ``model`` with ``user_tokenizer`` (called as
    ``user_tokenizer(sentences, max_length)``, returning ``input_ids`` and ``attention_mask``,
    as torchmetrics) and ``user_forward_fn`` when it is not a ``transformers`` model; or
    ``model_name_or_path``, a local directory written by ``save_pretrained`` (a model and its
    tokenizer). Nothing is downloaded. ``verbose`` and ``num_threads`` are accepted and unused.

    State: per pair the token ids and best cosines (about 12 bytes per token), see the module
    docstring, with the deliberate differences from torchmetrics.

        >>> import os, tempfile, torch
        >>> from transformers import BertConfig, BertModel, BertTokenizer
        >>> from torchtally.text import BERTScore
        >>> folder = tempfile.mkdtemp()
        >>> words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "there", "general", "master", "kenobi"]
        >>> with open(os.path.join(folder, "vocab.txt"), "w") as f:
        ...     _ = f.write("\\n".join(words))
        >>> _ = torch.manual_seed(0)
        >>> config = BertConfig(vocab_size=10, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        ...                     intermediate_size=16)
        >>> BertModel(config).save_pretrained(folder)
        >>> BertTokenizer(os.path.join(folder, "vocab.txt")).save_pretrained(folder)
        ('...
        >>> metric = BERTScore(model_name_or_path=folder)
        >>> _ = metric.update(["hello there"], ["hello there"])
        >>> score = metric.update(["general kenobi"], ["master kenobi"]).compute()
        >>> score["f1"][0].item()  # the same sentence: 1
        1.0
        >>> score["f1"].shape
        torch.Size([2])
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    traceable_update = False  # sentences are read in Python
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    option_names = ("num_layers", "all_layers", "idf", "max_length", "truncation", "rescale_with_baseline")
    if TYPE_CHECKING:
        pred_tokens: Tensor
        pred_best: Tensor
        target_tokens: Tensor
        target_best: Tensor
        lengths: Tensor
        groups: Tensor

    def __init__(
        self,
        model_name_or_path: Optional[str] = None,
        num_layers: Optional[int] = None,
        all_layers: bool = False,
        model: Optional[Module] = None,
        user_tokenizer: Optional[Any] = None,
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
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if not isinstance(idf, bool):
            raise ValueError(f"Expected argument `idf` to be a boolean, but got {idf}.")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"Expected `batch_size` to be an int >= 1, got {batch_size!r}")
        self.user_tokenizer = user_tokenizer is not None
        model, tokenizer = bert_forms.resolve_model("BERTScore", model_name_or_path, model, user_tokenizer, device)
        greedy_matching.check_num_layers(model, num_layers)
        columns = greedy_matching.num_columns(model, all_layers, user_forward_fn)
        self._baseline = bert_forms.baseline_table(rescale_with_baseline, baseline_path, baseline_url)
        self._model_ref = _ModelRef(model)
        self.tokenizer = tokenizer
        self.model_name_or_path = model_name_or_path or _DEFAULT_MODEL
        self.num_layers = num_layers
        self.all_layers = all_layers
        self.user_forward_fn = user_forward_fn
        self.verbose = verbose
        self.idf = idf
        self.embedding_device = device
        self.max_length = max_length
        self.batch_size = batch_size
        self.num_threads = num_threads
        self.return_hash = return_hash
        self.lang = lang
        self.rescale_with_baseline = rescale_with_baseline
        self.baseline_path = baseline_path
        self.baseline_url = baseline_url
        self.truncation = truncation
        ids = torch.empty(0, dtype=torch.int64)
        self.add_state("pred_tokens", ids.clone(), reduce="cat")
        self.add_state("target_tokens", ids.clone(), reduce="cat")
        self.add_state("pred_best", torch.empty(0, columns), reduce="cat")
        self.add_state("target_best", torch.empty(0, columns), reduce="cat")
        self.add_state("lengths", torch.empty(0, 2, dtype=torch.int64), reduce="cat")
        self.add_state("groups", ids.clone(), reduce="cat")

    @property
    def model(self) -> Module:
        """The language model (not part of the metric's state or module tree)."""
        return self._model_ref.model

    def update(self, preds: Union[str, List[str]], target: Union[str, List[Any]]) -> None:
        preds_list = sentence_list(preds, "preds")
        if not isinstance(target, (str, Sequence)):
            raise TypeError(
                f"target: expected a str, or a sequence of str (or of lists of str), got {type(target).__name__}"
            )
        target_list = [target] if isinstance(target, str) else list(target)
        flat_preds, flat_target, groups = greedy_matching.flatten_references(preds_list, target_list)
        if not flat_preds:
            return
        own = self.user_tokenizer
        preds_in = tokenize(self.tokenizer, flat_preds, self.max_length, self.truncation, own)
        target_in = tokenize(self.tokenizer, flat_target, self.max_length, self.truncation, own)
        rows = greedy_matching.pair_rows(
            self.model,
            preds_in,
            target_in,
            self.num_layers,
            self.all_layers,
            self.user_forward_fn,
            self.batch_size,
            self.embedding_device,
        )
        for name, value in rows.items():
            self.append_state(name, value.to(self.device), copy=False)
        self.append_state("groups", groups.to(self.device), copy=False)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        lengths = states["lengths"]
        if (
            int(lengths[:, 0].sum()) != states["pred_tokens"].shape[0]
            or int(lengths[:, 1].sum()) != states["target_tokens"].shape[0]
        ):
            raise ValueError("'lengths': the token counts do not add up to the token rows")
        if states["pred_best"].shape[0] != states["pred_tokens"].shape[0]:
            raise ValueError("'pred_best': one row per token of 'pred_tokens' expected")
        if states["target_best"].shape[0] != states["target_tokens"].shape[0]:
            raise ValueError("'target_best': one row per token of 'target_tokens' expected")
        if int(states["groups"].sum()) != lengths.shape[0] or bool((states["groups"] < 1).any()):
            raise ValueError("'groups': references per prediction (>= 1) adding up to the pairs expected")

    def compute(self) -> Dict[str, Union[Tensor, List[float], str]]:
        lengths = self.lengths.cpu()
        if lengths.shape[0] == 0:
            return bert_forms.empty_result(self.return_hash, self.model_name_or_path, self.num_layers, self.idf)
        scores = greedy_matching.precision_recall_f1(
            self.pred_tokens.cpu(),
            self.pred_best.cpu(),
            self.target_tokens.cpu(),
            self.target_best.cpu(),
            lengths,
            self.idf,
        )
        if self._baseline is not None:
            scores = greedy_matching.rescale(scores, self._baseline, self.num_layers, self.all_layers)
        groups = self.groups.cpu()
        grouped = not bool((groups == 1).all())
        out: Dict[str, Any] = greedy_matching.result(
            greedy_matching.best_of_groups(scores, groups), grouped, self.all_layers, torch.float32
        )
        if self.return_hash:
            out["hash"] = bert_forms.model_hash(self.model_name_or_path, self.num_layers, self.idf)
        return out
