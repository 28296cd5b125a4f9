"""The state that PESQ, STOI, DNSMOS and NISQA share: the mean of per-utterance scores.

State, all sum-reduced: ``<sum_name>`` float64 [k] (k = 1 as a 0-d tensor for PESQ and STOI;
4 for DNSMOS; 5 for NISQA), ``total`` int64 (utterances scored) and ``failed`` int64
(utterances the package or model could not score), 8 k + 16 bytes whatever the data. A sync is
one header exchange that carries these few numbers (torchtally.sync.plan's small plan), for
any number of ranks, and equals one process to float64 rounding.
"""

import warnings
from typing import TYPE_CHECKING, Any, Dict, Tuple

import numpy as np
import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative

__all__ = ["ScoredUtterances"]


class ScoredUtterances(Metric):
    """Base of the per-utterance audio metrics: ``add_scores`` takes float64 scores [B] or
    [B, k], a row with a NaN being an utterance that could not be scored; ``compute`` is the
    mean of the scored rows in ``self.dtype``, with a warning that says how many failed.

        >>> import numpy as np
        >>> from torchtally.audio.scored_utterances import ScoredUtterances
        >>> m = ScoredUtterances("sum_score", ())
        >>> m.add_scores(np.array([1.0, np.nan, 2.0]))
        >>> m.total, m.failed
        (tensor(2), tensor(1))
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    traceable_update = False
    if TYPE_CHECKING:  # declared states, read as attributes
        total: Tensor
        failed: Tensor

    def __init__(self, sum_name: str, shape: Tuple[int, ...], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._sum_name = sum_name
        self.add_state(sum_name, torch.zeros(shape, dtype=torch.float64), reduce="sum")
        self.add_state("total", torch.tensor(0, dtype=torch.int64), reduce="sum")
        self.add_state("failed", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def add_scores(self, scores: np.ndarray) -> None:
        """Add the rows of ``scores`` (computed and checked before any state changes)."""
        current: Tensor = getattr(self, self._sum_name)
        values = np.asarray(scores, dtype=np.float64)
        per_row = max(1, current.numel())  # (explicit sizes, not -1: ambiguous with no utterance)
        rows = torch.from_numpy(values).reshape(values.size // per_row, *current.shape)
        bad = torch.isnan(rows.reshape(rows.shape[0], per_row)).any(dim=1)
        good = rows[~bad].sum(dim=0).to(current.device)
        setattr(self, self._sum_name, current + good)
        self.total = self.total + int((~bad).sum())
        self.failed = self.failed + int(bad.sum())

    def compute(self) -> Tensor:
        failed, total = int(self.failed), int(self.total)
        if failed:
            warnings.warn(
                f"{type(self).__name__}: {failed} of {failed + total} utterances could not be scored "
                "and are left out of the mean",
                UserWarning,
                stacklevel=2,
            )
        return self.in_result_dtype(getattr(self, self._sum_name) / self.total)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "total", "failed")
