"""``CHRFScore`` (torchmetrics.text.chrf's names). chrF (``n_word_order=0``) or chrF++ (default."""

from typing import TYPE_CHECKING, Any, Dict, Sequence, Tuple, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.text import chrf as chrf_forms

__all__ = ["CHRFScore"]


class CHRFScore(Metric):
    """chrF (``n_word_order=0``) or chrF++ (default: character 6-grams, word 2-grams) of
    hypotheses against their references, each hypothesis scored against its best reference
    (torchmetrics' CHRFScore). ``beta`` weighs recall against precision; ``lowercase``;
    ``whitespace`` keeps spaces among the characters. ``return_sentence_level_score`` also
    returns each sentence's chrF.

    State: int64 [C + W, 3] sums, and with sentence scores a float64 cat state (8 bytes per
    sentence); see this module's docstring.

    Differs from torchmetrics: a hypothesis without a reference (``target[i] == []``) raises
    ValueError naming ``target[i]``, the state unchanged, as BLEU, TER and EED do (torchmetrics
    scores it 0 and averages it in).

        >>> from torchtally.text import CHRFScore
        >>> preds = ['the cat is on the mat']
        >>> target = [['there is a cat on the mat', 'a cat is on the mat']]
        >>> CHRFScore().update(preds, target).compute()
        tensor(0.8640)
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    traceable_update = False  # strings, read in Python
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    if TYPE_CHECKING:
        stats: Tensor
        sentence_chrf_score: Tensor

    def __init__(
        self,
        n_char_order: int = 6,
        n_word_order: int = 2,
        beta: float = 2.0,
        lowercase: bool = False,
        whitespace: bool = False,
        return_sentence_level_score: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        chrf_forms.check_chrf_args(n_char_order, n_word_order, beta)
        self.n_char_order, self.n_word_order, self.beta = n_char_order, n_word_order, float(beta)
        self.lowercase, self.whitespace = bool(lowercase), bool(whitespace)
        self.return_sentence_level_score = bool(return_sentence_level_score)
        self.n_order = float(n_char_order + n_word_order)
        self.add_state("stats", chrf_forms.chrf_stats(n_char_order, n_word_order), reduce="sum")
        if self.return_sentence_level_score:
            self.add_state("sentence_chrf_score", torch.zeros(0, dtype=torch.float64), reduce="cat")

    def update(self, preds: Union[str, Sequence[str]], target: Sequence[Union[str, Sequence[str]]]) -> None:
        sentence = chrf_forms.chrf_update(
            self.stats, preds, target, self.n_char_order, self.beta, self.lowercase, self.whitespace
        )
        if self.return_sentence_level_score:
            self.append_state("sentence_chrf_score", sentence.to(self.stats.device), copy=False)

    def compute(self) -> Union[Tensor, Tuple[Tensor, Tensor]]:
        score = chrf_forms.chrf_value(self.stats, self.beta, self.dtype)
        if self.return_sentence_level_score:
            return score, self.in_result_dtype(self.sentence_chrf_score)
        return score

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "stats")
