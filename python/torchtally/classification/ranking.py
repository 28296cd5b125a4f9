"""Multilabel ranking metrics: state declarations; the math lives in
torchtally.functional.classification.ranking.

State (one for all three, shared in a MetricCollection): ``ranking_sums`` float64 [3], the
per-sample sums of (coverage, ranking average precision, ranking loss), and ``num_samples``,
an int64 count; both sum-reduced. Results are in ``self.dtype`` (float32 by default).
"""

from typing import TYPE_CHECKING, Any, Dict, Optional

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.classification import ranking as rank_fn
from ..functional.classification.update import check_count, check_ignore_index

__all__ = ["MultilabelCoverageError", "MultilabelRankingAveragePrecision", "MultilabelRankingLoss"]


class _RankingBase(Metric):
    is_differentiable = False
    traceable_update = False  # probabilities or logits, and the checks, read the values: eager inside torch.compile
    full_state_update = False
    _column = rank_fn.COVERAGE
    if TYPE_CHECKING:  # declared states, read as attributes
        ranking_sums: Tensor
        num_samples: Tensor

    def __init__(
        self, num_labels: int, ignore_index: Optional[int] = None, validate_args: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.num_labels = check_count("num_labels", num_labels)
        self.ignore_index = check_ignore_index(ignore_index)
        self.validate_args = validate_args
        self.add_state("ranking_sums", torch.zeros(3, dtype=torch.float64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")
        self.state_key = ("torchtally.ranking", self.num_labels, self.ignore_index)

    def update(self, preds: Tensor, target: Tensor) -> None:
        self.num_samples += rank_fn.ranking_update(self.ranking_sums, preds, target, self.num_labels, self.ignore_index)

    def compute(self) -> Tensor:
        return rank_fn.ranking_result(self.ranking_sums, self.num_samples, self._column, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "ranking_sums", "num_samples")


class MultilabelCoverageError(_RankingBase):
    """Coverage error: how far down its ranked labels a sample must go, on average, to cover all
    its relevant labels (scikit-learn's coverage_error). preds [N, L, ...] probabilities or
    logits, target [N, L, ...] in {0, 1}.

    Differences from torchmetrics: float64 sums; NaN scores raise ValueError; no gradient.

        >>> import torch
        >>> from torchtally.classification import MultilabelCoverageError
        >>> m = MultilabelCoverageError(num_labels=3)
        >>> m.update(torch.tensor([[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]]), torch.tensor([[1, 0, 0], [0, 0, 1]])).compute()
        tensor(2.5000)
    """

    higher_is_better = False
    _column = rank_fn.COVERAGE


class MultilabelRankingAveragePrecision(_RankingBase):
    """Label ranking average precision (scikit-learn's label_ranking_average_precision_score; a
    sample with no relevant label, or only relevant ones, scores 1). Inputs as
    MultilabelCoverageError.

    Differences from torchmetrics: float64 sums (torchmetrics: float32, one sample at a time in
    a Python loop); NaN scores raise ValueError; no gradient.

        >>> import torch
        >>> from torchtally.classification import MultilabelRankingAveragePrecision
        >>> m = MultilabelRankingAveragePrecision(num_labels=3)
        >>> m.update(torch.tensor([[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]]), torch.tensor([[1, 0, 0], [0, 0, 1]])).compute()
        tensor(0.4167)
    """

    higher_is_better = True
    _column = rank_fn.AVERAGE_PRECISION


class MultilabelRankingLoss(_RankingBase):
    """Label ranking loss: the share of (relevant, irrelevant) label pairs a sample ranks wrongly
    (scikit-learn's label_ranking_loss; 0 for a sample with no relevant label, or only relevant
    ones). Inputs as MultilabelCoverageError.

    Differences from torchmetrics: a tie between a relevant and an irrelevant label counts as a
    misordered pair (as scikit-learn; torchmetrics breaks it by argsort's order); every sample
    is counted (torchmetrics counts a batch whose samples all have no or only relevant labels as
    one sample); float64 sums; NaN scores raise ValueError; no gradient.

        >>> import torch
        >>> from torchtally.classification import MultilabelRankingLoss
        >>> m = MultilabelRankingLoss(num_labels=3)
        >>> m.update(torch.tensor([[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]]), torch.tensor([[1, 0, 0], [0, 0, 1]])).compute()
        tensor(0.7500)
    """

    higher_is_better = False
    _column = rank_fn.LOSS
