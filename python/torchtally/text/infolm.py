"""InfoLM: torchmetrics.text.InfoLM's signature and values, from a local masked language model;
the math lives in torchtally.functional.text (infolm.py, information_measures.py). No C kernel: the
model dominates the cost.

State ("cat" states, int64, synced in the one padded all_gather): every sentence's attended
token ids (8 bytes per token, after truncation to ``max_length``) and the token counts of each
(prediction, reference) pair (16 bytes per pair). torchmetrics keeps ids and attention masks
padded to ``max_length`` (16 bytes per position and sentence). As torchmetrics, the model runs
at compute over all the sentences: idf weights need every sentence of the data set, and a
sentence's distribution is a vocabulary-sized vector per token, too large to keep. The result
is the same on every rank as in one process over all the data.

Deliberate differences from torchmetrics:

* nothing is downloaded: ``model_name_or_path`` must be a local directory written by
  ``save_pretrained`` (torchmetrics' default "bert-base-uncased" gives a ValueError saying so);
* ``max_length`` defaults to the model config's ``max_length``; transformers 5 configs have
  none, and then a ValueError asks for it (torchmetrics fails with an AttributeError);
* scores are in the order of the pairs given: torchmetrics sorts sentences by length and then
  indexes the sorted distributions with the sort permutation instead of its inverse, so where
  that permutation is not its own inverse it compares a prediction with another reference;
* ``verbose`` and ``num_threads`` are accepted and unused (no progress bar, no loader); no
  update before compute gives NaN (and the base class's warning).
"""

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..functional.text.embedding_models import sentence_list
from ..functional.text.infolm import check_options, load_masked_lm, sentence_scores, token_rows
from ..functional.text.information_measures import HIGHER_IS_BETTER, check_measure

__all__ = ["InfoLM"]


class _ModelRef:
    """Holds the language model outside the metric's module tree (not metric state)."""

    def __init__(self, model: Any) -> None:
        self.model = model


class InfoLM(Metric):
    """InfoLM: an information measure between a masked language model's distributions over the
    vocabulary for each predicted sentence and its reference, averaged over the sentences;
    ``return_sentence_level_score=True`` also returns the per-sentence values (update order,
    rank order across ranks).

    ``model_name_or_path``: a local directory holding a masked language model and its
    tokenizer (``save_pretrained``); nothing is downloaded. ``max_length``: needed when the
    model's config has none (transformers 5). ``idf``: tokens weighted by their inverse
    document frequency among all predictions (resp. references) of the data set. Measures as
    torchmetrics: kl_divergence, alpha_divergence, beta_divergence, ab_divergence,
    renyi_divergence (alpha, beta floats), l1_distance, l2_distance, l_infinity_distance,
    fisher_rao_distance. ``higher_is_better`` follows the measure.

    State: the token ids of every sentence (8 bytes per token, 16 per pair); see the module
    docstring, with the deliberate differences from torchmetrics.

        >>> import os, tempfile, torch
        >>> from transformers import BertConfig, BertForMaskedLM, BertTokenizer
        >>> from torchtally.text import InfoLM
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
        >>> metric = InfoLM(folder, idf=False, max_length=16, return_sentence_level_score=True)
        >>> _ = metric.update(["he read the book"], ["he read the book"])
        >>> mean, per_sentence = metric.update(["the book"], ["he read history"]).compute()
        >>> per_sentence.shape, abs(per_sentence[0].item()) < 1e-6
        (torch.Size([2]), True)
    """

    is_differentiable = False
    full_state_update = False
    traceable_update = False  # sentences are read in Python
    option_names = ("temperature", "information_measure", "idf", "alpha", "beta", "max_length")
    if TYPE_CHECKING:
        pred_tokens: Tensor
        target_tokens: Tensor
        lengths: Tensor

    def __init__(
        self,
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
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_options(temperature, idf, batch_size)
        self.information_measure = check_measure(information_measure, alpha, beta)
        tokenizer, model, max_length, special = load_masked_lm("InfoLM", model_name_or_path, device, max_length)
        self._model_ref = _ModelRef(model)
        self.tokenizer = tokenizer
        self.special_tokens_map = special
        self.model_name_or_path = os.fspath(model_name_or_path)
        self.temperature = temperature
        self.idf = idf
        self.alpha = alpha
        self.beta = beta
        self.max_length = max_length
        self.batch_size = batch_size
        self.num_threads = num_threads
        self.verbose = verbose
        self.return_sentence_level_score = return_sentence_level_score
        ids = torch.empty(0, dtype=torch.int64)
        self.add_state("pred_tokens", ids.clone(), reduce="cat")
        self.add_state("target_tokens", ids.clone(), reduce="cat")
        self.add_state("lengths", torch.empty(0, 2, dtype=torch.int64), reduce="cat")

    @property
    def model(self) -> Any:
        """The masked language model (not part of the metric's state or module tree)."""
        return self._model_ref.model

    @property
    def higher_is_better(self) -> bool:  # type: ignore[override]
        """Whether a higher value is better: True for kl_divergence and alpha_divergence (their
        values are <= 0), False for the others."""
        return HIGHER_IS_BETTER[self.information_measure]

    def update(self, preds: Union[str, Sequence[str]], target: Union[str, Sequence[str]]) -> None:
        preds_list, target_list = sentence_list(preds, "preds"), sentence_list(target, "target")
        if len(preds_list) != len(target_list):
            raise ValueError(
                "preds, target: Expected as many predicted as reference sentences, got "
                f"{len(preds_list)} and {len(target_list)}"
            )
        if not preds_list:
            return
        p_tokens, p_lengths = token_rows(self.tokenizer, preds_list, self.max_length)
        t_tokens, t_lengths = token_rows(self.tokenizer, target_list, self.max_length)
        self.append_state("pred_tokens", p_tokens.to(self.device), copy=False)
        self.append_state("target_tokens", t_tokens.to(self.device), copy=False)
        self.append_state("lengths", torch.stack([p_lengths, t_lengths], 1).to(self.device), copy=False)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        lengths = states["lengths"]
        if bool((lengths < 0).any()) or int(lengths[:, 0].sum()) != states["pred_tokens"].shape[0]:
            raise ValueError("'lengths': the prediction token counts do not add up to 'pred_tokens'")
        if int(lengths[:, 1].sum()) != states["target_tokens"].shape[0]:
            raise ValueError("'lengths': the reference token counts do not add up to 'target_tokens'")

    def compute(self) -> Union[Tensor, Tuple[Tensor, Tensor]]:
        lengths = self.lengths.cpu()
        sides = ((self.pred_tokens.cpu(), lengths[:, 0]), (self.target_tokens.cpu(), lengths[:, 1]))
        scores = sentence_scores(
            self.model,
            sides,
            self.special_tokens_map,
            self.temperature,
            self.idf,
            self.information_measure,
            self.alpha,
            self.beta,
            self.batch_size,
        )
        if self.return_sentence_level_score:
            return scores.mean(), scores
        return scores.mean()
