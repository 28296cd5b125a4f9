"""ARNIQA: no-reference image quality from the user's encoder and regressor
(torchtally.functional.image.arniqa).

State: reduction "mean"/"sum": ``sum_scores`` float64 and ``num_scores`` int64, sum-reduced
(16 bytes; a sync is one header exchange that carries them, one per dtype); "none": ``scores``, a
float64 "cat" state of one value per image (8 bytes per image; one padded all_gather)."""

from typing import TYPE_CHECKING, Any, Dict, Optional

import torch
from torch import Tensor, nn

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.image.arniqa import arniqa_scores, check_arniqa_args, check_arniqa_models

__all__ = ["ARNIQA"]


class ARNIQA(Metric):
    """ARNIQA quality of images: ``update(img)`` with ``img`` [N, 3, H, W] (in [0, 1] when
    ``normalize``); ``compute`` gives the mean (``reduction="mean"``), the sum ("sum") or every
    image's score ("none"), scaled to [0, 1] by ``regressor_dataset``'s range. The network is
    the user's (nothing downloads): ``encoder`` maps images to [N, D] features and
    ``regressor`` maps the two L2-normalised feature vectors of an image and its half-size
    copy, [N, 2 D], to [N, 1] (torchtally.functional.image.arniqa says how to build ARNIQA's
    from its released weights; a ValueError says what to pass when they are missing). State:
    float64 ``sum_scores`` and int64 ``num_scores`` (16 bytes; one header exchange that carries them),
    or for "none" a float64 cat state of 8 bytes per image (one padded all_gather).

    Differences from torchmetrics: the network is the user's (torchmetrics downloads resnet50
    and ARNIQA's weights); "none" gives one score per image (torchmetrics' class: the sum);
    scores are summed in float64 and the result is in ``self.dtype``; no gradient reaches the
    state (``is_differentiable`` is False).

        >>> import torch
        >>> from torchtally.image.arniqa import ARNIQA
        >>> _ = torch.manual_seed(0)
        >>> encoder = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
        >>> regressor = torch.nn.Linear(16, 1)
        >>> metric = ARNIQA(encoder=encoder, regressor=regressor, reduction="none")
        >>> metric.update(torch.rand(4, 3, 16, 16)).compute().shape
        torch.Size([4])
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    traceable_update = False
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    if TYPE_CHECKING:  # declared states, read as attributes
        sum_scores: Tensor
        num_scores: Tensor
        scores: Tensor

    def __init__(
        self,
        regressor_dataset: str = "koniq10k",
        reduction: str = "mean",
        normalize: bool = True,
        autocast: bool = False,
        *,
        encoder: Optional[nn.Module] = None,
        regressor: Optional[nn.Module] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_arniqa_args(regressor_dataset, reduction, normalize)
        self.encoder, self.regressor = check_arniqa_models(encoder, regressor)
        self.regressor_dataset = regressor_dataset
        self.reduction = reduction
        self.normalize = normalize
        self.autocast = bool(autocast)
        if reduction == "none":
            self.add_state("scores", torch.empty(0, dtype=torch.float64), reduce="cat")
        else:
            self.add_state("sum_scores", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
            self.add_state("num_scores", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, img: Tensor) -> None:
        with torch.no_grad():
            scores = arniqa_scores(
                img, self.encoder, self.regressor, self.regressor_dataset, self.normalize, self.autocast
            ).to(torch.float64)
        if not bool(torch.isfinite(scores).all()):
            raise ValueError("img: the model gave a NaN or infinite score")
        if self.reduction == "none":
            self.append_state("scores", scores, copy=False)
            return
        self.sum_scores = self.sum_scores + scores.sum().to(self.sum_scores.device)
        self.num_scores = self.num_scores + scores.shape[0]

    def compute(self) -> Tensor:
        if self.reduction == "none":
            return self.in_result_dtype(self.scores)
        if self.reduction == "sum":
            return self.in_result_dtype(self.sum_scores)
        return self.in_result_dtype(self.sum_scores / self.num_scores)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "num_scores")
