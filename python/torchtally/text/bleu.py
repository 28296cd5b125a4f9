"""The n-gram text metrics: BLEUScore, SacreBLEUScore and CHRFScore, torchmetrics' classes with
its constructor signatures, accepted inputs and values. State declarations; the math lives in
torchtally.functional.text (bleu.py, chrf.py; inputs and tokenizers beside them) and the
counting in the C kernels bleu_update / chrf_update (csrc/kernels/ngram.c).

Each update maps the batch's tokens to integer ids in Python and counts n-grams in C (a hash
table per sentence, O(sentence length)); the state is sums only:

* BLEU: ``stats`` int64 [n_gram + 1, 2] (per order: clipped matches, hypothesis n-grams; last
  row: hypothesis length, closest reference length): 16 * (n_gram + 1) bytes, one all_reduce;
* chrF: ``stats`` int64 [n_char_order + n_word_order, 3] (hypothesis n-grams, best reference's
  n-grams, matches), one all_reduce; with ``return_sentence_level_score`` also
  ``sentence_chrf_score``, a cat state of each sentence's chrF (float64: 8 bytes per sentence).

Deliberate differences from torchmetrics:

* exact counts: int64 statistics and float64 arithmetic (torchmetrics counts in float32, exact
  to 2^24 n-grams, and forms the scores in float32); results in ``self.dtype``;
* errors where torchmetrics accepts garbage or fails late: non-string hypotheses or references
  are a TypeError, a BLEU hypothesis without a reference a ValueError (torchmetrics: "min() arg
  is an empty sequence"), preds and target of different lengths always a ValueError (chrF's
  check in torchmetrics is skipped when a reference list is empty), ``n_gram`` < 1 a ValueError;
* the classes read a string hypothesis and a string reference as the functions do (one
  sentence, one reference); torchmetrics' BLEU classes would iterate their characters. So
  ``BLEUScore()(preds, ["ref 1", "ref 2"])``, a flat list of reference strings, is one
  reference per sentence (as bleu_score reads it); torchmetrics' BLEUScore takes each string's
  characters as that sentence's references and returns 0.0;
* a chrF hypothesis without a reference (an empty list in ``target``) is a ValueError naming
  ``target[i]``, as for BLEU (torchmetrics scores it 0 and averages it in);
* CHRFScore with ``return_sentence_level_score`` returns (score, sentence scores) also before
  any sentence (an empty tensor; torchmetrics fails to concatenate an empty list, and its
  chrf_score then returns the score alone);
* chrF's best reference is chosen by float64 scores (torchmetrics compares float32 ones: two
  references whose chrF differ by less than float32's resolution may be chosen differently);
* the 'flores101' / 'flores200' tokenizers never download their model: a FileNotFoundError
  says where to put it.
"""

from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Union

from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.text import bleu as bleu_forms
from ..functional.text import ngram_inputs

__all__ = ["BLEUScore"]


class BLEUScore(Metric):
    """BLEU of machine-translated hypotheses against one or more references each, words split on
    whitespace (torchmetrics' BLEUScore). ``n_gram``: the largest order; ``smooth``: add one to
    the counts of orders 2 and up; ``weights``: per order (uniform by default).

    State: int64 [n_gram + 1, 2] sums (see this module's docstring; one all_reduce to sync).

    Differs from torchmetrics: a flat list of reference strings, ``target=["ref 1", "ref 2"]``,
    is one reference per sentence, as bleu_score reads it (torchmetrics' BLEUScore iterates each
    string's characters as references and returns 0.0); a hypothesis without a reference raises
    ValueError naming ``target[i]`` (torchmetrics: "min() arg is an empty sequence").

        >>> from torchtally.text import BLEUScore
        >>> preds = ['the cat is on the mat']
        >>> target = [['there is a cat on the mat', 'a cat is on the mat']]
        >>> BLEUScore().update(preds, target).compute()
        tensor(0.7598)
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    traceable_update = False  # strings, read in Python
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    if TYPE_CHECKING:
        stats: Tensor

    _tokenize = "none"
    _lowercase = False

    def __init__(
        self, n_gram: int = 4, smooth: bool = False, weights: Optional[Sequence[float]] = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.weights = ngram_inputs.check_n_gram(n_gram, weights)
        self.n_gram = n_gram
        self.smooth = smooth
        self.add_state("stats", bleu_forms.bleu_stats(n_gram), reduce="sum")

    def update(self, preds: Union[str, Sequence[str]], target: Sequence[Union[str, Sequence[str]]]) -> None:
        bleu_forms.bleu_update(self.stats, preds, target, self._tokenize, self._lowercase)

    def compute(self) -> Tensor:
        return bleu_forms.bleu_value(self.stats, self.weights, self.smooth, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "stats")
