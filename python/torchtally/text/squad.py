"""SQuAD: state declarations; the math lives in torchtally.functional.text.squad.

State: ``f1_score`` and ``exact_match``, float64 sums over questions of the best F1 and exact
match against their answers, and ``total``, an int64 count of questions; all sum-reduced (24
bytes, as torchmetrics' three scalars). Results are in ``self.dtype`` (float32 by default).

Deliberate differences from torchmetrics: float64 sums (torchmetrics: float32); a question with
no answer text raises ValueError and a non-string answer or prediction TypeError, with the state
unchanged (torchmetrics: a bare ``max()`` error midway through the batch).
"""

from typing import TYPE_CHECKING, Any, Dict, List, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.text.squad import check_squad_inputs, squad_batch_sums, squad_result

__all__ = ["SQuAD"]


class SQuAD(Metric):
    """SQuAD v1.1 exact match and F1, in percent: ``update(preds, target)`` with preds a dict
    (or a list of them) ``{"prediction_text": str, "id": ...}`` and target
    ``{"answers": {"text": [str, ...], ...}, "id": ...}``; compute gives
    ``{"exact_match": ..., "f1": ...}``. A question without a prediction warns and scores 0.

    Differences from torchmetrics: see the module docstring (float64 sums; bad answers raise).

        >>> from torchtally.text import SQuAD
        >>> preds = [{"prediction_text": "1976", "id": "56e10a3be3433e1400422b22"}]
        >>> target = [{"answers": {"answer_start": [97], "text": ["1976"]}, "id": "56e10a3be3433e1400422b22"}]
        >>> SQuAD().update(preds, target).compute()
        {'exact_match': tensor(100.), 'f1': tensor(100.)}
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    traceable_update = False  # strings: eager inside torch.compile
    plot_lower_bound = 0.0
    plot_upper_bound = 100.0
    if TYPE_CHECKING:  # declared states, read as attributes
        f1_score: Tensor
        exact_match: Tensor
        total: Tensor

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("f1_score", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        self.add_state("exact_match", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        self.add_state("total", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(
        self, preds: Union[Dict[str, str], List[Dict[str, str]]], target: Union[Dict[str, Any], List[Dict[str, Any]]]
    ) -> None:
        by_id, questions = check_squad_inputs(preds, target)
        f1, em, n = squad_batch_sums(by_id, questions)
        self.f1_score += f1
        self.exact_match += em
        self.total += n

    def compute(self) -> Dict[str, Tensor]:
        return squad_result(self.f1_score, self.exact_match, self.total, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "f1_score", "exact_match", "total")
