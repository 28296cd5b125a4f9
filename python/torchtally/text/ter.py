"""Text metrics over edit operations of whole sentences: TranslationEditRate (Tercom's TER,
word level, with shifts) and ExtendedEditDistance (EED, character level, with jumps). State
declarations; the tokenisation and the sums live in torchtally.functional.text
(translation_sums.py, extended_sums.py), the edit searches in the C core (kernels ter_sentences
and eed_sentences, csrc/API.md; the Python reference where it is not built).

torchmetrics' classes with its constructor signatures, accepted inputs (``preds`` a string or
a sequence of them; ``target`` per sentence a sequence of references, or a flat sequence of
strings read as torchmetrics reads it) and results (in ``self.dtype``).

State ("sum" states: a sync is one all_reduce; 16 bytes whatever the corpus):

* TranslationEditRate: ``total_num_edits`` and ``total_tgt_len``, float64 sums of each
  sentence's fewest edits and average reference length;
* ExtendedEditDistance: ``sentence_eed_sum`` float64 and ``num_sentences`` int64.
* With ``return_sentence_level_score=True`` also a "cat" state of each sentence's score,
  float64 (8 bytes per sentence): ``sentence_ter`` / ``sentence_eed`` (synced by the one padded
  all_gather of cat states).

Deliberate differences from torchmetrics:

* TER is sacrebleu's value (the field's reference; Tercom's algorithm): torchmetrics passes
  hypothesis and reference to its shift search the wrong way round (it shifts reference words
  and spans of at most 9 words, against Tercom's hypothesis spans of 10), which gives other edit
  counts on some sentences (about 2 in 100 random short ones), and it counts 0 edits for an
  empty hypothesis (here: one deletion per reference word, as sacrebleu);
* sums in float64 (torchmetrics: float32 tensors);
* a sentence without references (an empty list in ``target``) is a ValueError naming
  ``target[i]``, raised before any state changes: torchmetrics' TER counts it as 0 edits over 0
  words (a batch of only such sentences scores 0), its EED scores a lone one 0 and gives inf
  when the batch holds other sentences; a str where a list of references is expected, or a
  non-str sentence, is a TypeError naming the argument (torchmetrics reads a string's
  characters as references); an EED score of
  0 / 0 (empty Japanese reference and hypothesis with ``rho`` 0) is 0 (torchmetrics: an
  error); EED's costs must be finite (torchmetrics accepts inf);
* ``translation_edit_rate(..., return_sentence_level_score=True)`` returns a pair also for no
  sentences, and ``extended_edit_distance``'s per-sentence tensor is empty there (torchmetrics:
  the score alone, or an error).
"""

from typing import TYPE_CHECKING, Any, Dict, Sequence, Tuple, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.text import translation_sums

__all__ = ["TranslationEditRate"]

F64 = torch.float64
Preds = Union[str, Sequence[str]]
Target = Sequence[Union[str, Sequence[str]]]


class TranslationEditRate(Metric):
    """Translation edit rate (TER): the summed fewest Tercom edits (word insertions, deletions,
    substitutions and shifts of word spans) over the summed average reference lengths, the best
    reference of each sentence chosen (sacrebleu's TER; see the module docstring for where
    torchmetrics differs). Options: Tercom's tokeniser (``normalize``, ``no_punctuation``,
    ``lowercase``, ``asian_support``); ``return_sentence_level_score`` makes compute return
    ``(ter, per-sentence TER [N])``.

    State: two float64 sums (16 bytes), plus 8 bytes per sentence with sentence scores. 0 over
    no sentences (as torchmetrics).

    Differs from torchmetrics: a hypothesis without a reference (``target[i] == []``) raises
    ValueError naming ``target[i]``, the state unchanged (torchmetrics counts it as 0 edits).

        >>> from torchtally.text import TranslationEditRate
        >>> preds = ['the cat is on the mat']
        >>> target = [['there is a cat on the mat', 'a cat is on the mat']]
        >>> TranslationEditRate().update(preds, target).compute()
        tensor(0.1538)
    """

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    traceable_update = False  # strings are read in Python
    if TYPE_CHECKING:  # states declared with add_state (read and assigned as attributes)
        total_num_edits: Tensor
        total_tgt_len: Tensor
        sentence_ter: Tensor

    def __init__(
        self,
        normalize: bool = False,
        no_punctuation: bool = False,
        lowercase: bool = True,
        asian_support: bool = False,
        return_sentence_level_score: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.options = translation_sums.check_options(normalize, no_punctuation, lowercase, asian_support)
        self.return_sentence_level_score = bool(return_sentence_level_score)
        self.add_state("total_num_edits", torch.tensor(0.0, dtype=F64), reduce="sum")
        self.add_state("total_tgt_len", torch.tensor(0.0, dtype=F64), reduce="sum")
        if self.return_sentence_level_score:
            self.add_state("sentence_ter", torch.empty(0, dtype=F64), reduce="cat")

    def update(self, preds: Preds, target: Target) -> None:
        stats = translation_sums.sentence_stats(preds, target, self.options).to(self.device)
        self.total_num_edits += stats[:, 0].sum()
        self.total_tgt_len += stats[:, 1].sum()
        if self.return_sentence_level_score:
            self.append_state("sentence_ter", translation_sums.rate(stats[:, 0], stats[:, 1]), copy=False)

    def compute(self) -> Union[Tensor, Tuple[Tensor, Tensor]]:
        ter = self.in_result_dtype(translation_sums.rate(self.total_num_edits, self.total_tgt_len))
        if self.return_sentence_level_score:
            return ter, self.in_result_dtype(self.sentence_ter)
        return ter

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "total_num_edits")
        check_nonnegative(states, "total_tgt_len")
