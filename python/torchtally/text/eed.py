"""``ExtendedEditDistance`` (torchmetrics.text.eed's names). Extended edit distance (EED)."""

from typing import TYPE_CHECKING, Any, Dict, Tuple, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.text import extended_sums
from .ter import F64, Preds, Target

__all__ = ["ExtendedEditDistance"]


class ExtendedEditDistance(Metric):
    """Extended edit distance (EED): the mean over sentences of each sentence's lowest EED over
    its references, a character-level edit distance with jumps (cost ``alpha``), a coverage
    penalty (``rho``) and ``deletion`` / ``insertion`` costs (Stanchev et al., WMT 2019;
    torchmetrics' values). ``language`` "en" or "ja" chooses the text preparation;
    ``return_sentence_level_score`` makes compute return ``(mean, per-sentence EED [N])``.

    State: a float64 sum and an int64 count (16 bytes), plus 8 bytes per sentence with sentence
    scores. 0 over no sentences (as torchmetrics).

    Differs from torchmetrics: a hypothesis without a reference (``target[i] == []``) raises
    ValueError naming ``target[i]``, the state unchanged (torchmetrics scores it 0 alone, and
    returns inf when the batch holds other sentences).

        >>> from torchtally.text import ExtendedEditDistance
        >>> preds = ["this is the prediction", "here is an other sample"]
        >>> target = ["this is the reference", "here is another one"]
        >>> ExtendedEditDistance().update(preds, target).compute()
        tensor(0.3078)
    """

    is_differentiable = False
    higher_is_better = False
    full_state_update = False
    traceable_update = False  # strings are read in Python
    if TYPE_CHECKING:  # states declared with add_state (read and assigned as attributes)
        sentence_eed_sum: Tensor
        num_sentences: Tensor
        sentence_eed: Tensor

    def __init__(
        self,
        language: str = "en",
        return_sentence_level_score: bool = False,
        alpha: float = 2.0,
        rho: float = 0.3,
        deletion: float = 0.2,
        insertion: float = 1.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.language = extended_sums.check_language(language)
        self.alpha, self.rho, self.deletion, self.insertion = extended_sums.check_costs(alpha, rho, deletion, insertion)
        self.return_sentence_level_score = bool(return_sentence_level_score)
        self.add_state("sentence_eed_sum", torch.tensor(0.0, dtype=F64), reduce="sum")
        self.add_state("num_sentences", torch.tensor(0, dtype=torch.int64), reduce="sum")
        if self.return_sentence_level_score:
            self.add_state("sentence_eed", torch.empty(0, dtype=F64), reduce="cat")

    def update(self, preds: Preds, target: Target) -> None:
        costs = (self.alpha, self.rho, self.deletion, self.insertion)
        scores = extended_sums.sentence_scores(preds, target, self.language, costs).to(self.device)
        self.sentence_eed_sum += scores.sum()
        self.num_sentences += scores.numel()
        if self.return_sentence_level_score:
            self.append_state("sentence_eed", scores, copy=False)

    def compute(self) -> Union[Tensor, Tuple[Tensor, Tensor]]:
        n = self.num_sentences
        mean = self.in_result_dtype(torch.where(n > 0, self.sentence_eed_sum / n.clamp(min=1), 0.0))
        if self.return_sentence_level_score:
            return mean, self.in_result_dtype(self.sentence_eed)
        return mean

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "num_sentences")
        check_nonnegative(states, "sentence_eed_sum")
