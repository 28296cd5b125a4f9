"""torchmetrics' "Implementing a Metric" examples (its docs, v1.9), built twice from the same
text: once as written (``from torchmetrics ...``), once with only the imports changed to
torchtally. ``examples("torchtally")`` / ``examples("torchmetrics")`` give each build's classes
by name.

The docs use names they never define (``self._input_format``, ``_rank_data``, ``eps``): they are
test scaffolding here (``_rank_data`` and ``eps`` below, ``_input_format`` added by the
``Scaffolded*`` subclasses), never part of the library. The plot example's MyMetric has no state,
update or compute; ``PlotScaffold`` gives it a mean so it can be drawn.
"""

import functools
from typing import Any, Dict, Optional, Sequence, Union

import torch
from torch import Tensor

DOC_EXAMPLES = """
from torchmetrics import Metric

class MyAccuracy(Metric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("correct", default=torch.tensor(0), dist_reduce_fx="sum")
        self.add_state("total", default=torch.tensor(0), dist_reduce_fx="sum")

    def update(self, preds: Tensor, target: Tensor) -> None:
        preds, target = self._input_format(preds, target)
        if preds.shape != target.shape:
            raise ValueError("preds and target must have the same shape")

        self.correct += torch.sum(preds == target)
        self.total += target.numel()

    def compute(self) -> Tensor:
        return self.correct.float() / self.total

from torchmetrics import Metric
from torchmetrics.utilities import dim_zero_cat

class MySpearmanCorrCoef(Metric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("preds", default=[], dist_reduce_fx="cat")
        self.add_state("target", default=[], dist_reduce_fx="cat")

    def update(self, preds: Tensor, target: Tensor) -> None:
        self.preds.append(preds)
        self.target.append(target)

    def compute(self):
        # parse inputs
        preds = dim_zero_cat(self.preds)
        target = dim_zero_cat(self.target)
        # some intermediate computation...
        r_preds, r_target = _rank_data(preds), _rank_data(target)
        preds_diff = r_preds - r_preds.mean(0)
        target_diff = r_target - r_target.mean(0)
        cov = (preds_diff * target_diff).mean(0)
        preds_std = torch.sqrt((preds_diff * preds_diff).mean(0))
        target_std = torch.sqrt((target_diff * target_diff).mean(0))
        # finalize the computations
        corrcoef = cov / (preds_std * target_std + eps)
        return torch.clamp(corrcoef, -1.0, 1.0)

from torchmetrics import Metric

class MyMetric(Metric):
    # Set to True if the metric is differentiable else set to False
    is_differentiable: Optional[bool] = None

    # Set to True if the metric reaches it optimal value when the metric is maximized.
    # Set to False if it when the metric is minimized.
    higher_is_better: Optional[bool] = True

    # Set to True if the metric during 'update' requires access to the global metric
    # state for its calculations. If not, setting this to False indicates that all
    # batch states are independent and we will optimize the runtime of 'forward'
    full_state_update: bool = True

MyAttributesMetric = MyMetric

from torchmetrics import Metric
from torchmetrics.utilities.plot import _AX_TYPE, _PLOT_OUT_TYPE

class MyMetric(Metric):
    # set these attributes if you want to use the internal ._plot method
    # bounds are automatically added to the generated plot
    plot_lower_bound: Optional[float] = None
    plot_upper_bound: Optional[float] = None

    def plot(
        self, val: Optional[Union[Tensor, Sequence[Tensor]]] = None, ax: Optional[_AX_TYPE] = None
    ) -> _PLOT_OUT_TYPE:
        return self._plot(val, ax)

MyPlotMetric = MyMetric
"""


def _rank_data(data: Tensor) -> Tensor:
    """Ranks 1..n of a 1-D tensor, tied values sharing their mean rank (scaffolding)."""
    order = data.argsort()
    ranks = torch.empty_like(data, dtype=torch.float64)
    ranks[order] = torch.arange(1, data.numel() + 1, dtype=torch.float64)
    _, inverse, counts = torch.unique(data, return_inverse=True, return_counts=True)
    sums = torch.zeros(counts.numel(), dtype=torch.float64).scatter_add_(0, inverse, ranks)
    return (sums / counts)[inverse].to(data.dtype)


eps = 1e-6


@functools.cache
def examples(library: str) -> Dict[str, Any]:
    """The docs' classes built against ``library`` ("torchtally": only the imports changed),
    plus the scaffolded subclasses the tests instantiate."""
    source = DOC_EXAMPLES if library == "torchmetrics" else DOC_EXAMPLES.replace("from torchmetrics", "from torchtally")
    namespace: Dict[str, Any] = {
        "__name__": __name__,
        "torch": torch,
        "Tensor": Tensor,
        "Optional": Optional,
        "Sequence": Sequence,
        "Union": Union,
        "_rank_data": _rank_data,
        "eps": eps,
    }
    exec(compile(source, f"<implement.rst examples, {library}>", "exec"), namespace)

    class ScaffoldedAccuracy(namespace["MyAccuracy"]):  # type: ignore[misc, valid-type]
        def _input_format(self, preds: Tensor, target: Tensor) -> Any:
            return preds, target

    class PlotScaffold(namespace["MyPlotMetric"]):  # type: ignore[misc, valid-type]
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.add_state("total", default=torch.tensor(0.0), dist_reduce_fx="sum")
            self.add_state("count", default=torch.tensor(0), dist_reduce_fx="sum")

        def update(self, x: Tensor) -> None:
            self.total += x.sum()
            self.count += x.numel()

        def compute(self) -> Tensor:
            return self.total / self.count

    namespace["ScaffoldedAccuracy"] = ScaffoldedAccuracy
    namespace["PlotScaffold"] = PlotScaffold
    return namespace
