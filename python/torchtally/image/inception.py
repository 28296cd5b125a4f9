"""``InceptionScore`` (torchmetrics.image.inception's names). Inception Score."""

from typing import TYPE_CHECKING, Any, Tuple, Union

import torch
from torch import Tensor, nn

from ..base.metric import Metric
from ..errors import NotComputableError
from ..functional.image.generative_features import (
    NO_WIDTH,
    agreed_width,
    check_bool,
    extract_rows,
    feature_rows,
    resolve_extractor,
)
from ..functional.image.generative_scores import inception_splits
from .kid import LAYERS

__all__ = ["InceptionScore"]


class InceptionScore(Metric):
    """Inception Score: exp of the mean KL divergence between each image's class distribution
    (softmax of the extractor's logits) and their mean, on ``splits`` chunks of the randomly
    permuted images; ``compute()`` returns (mean, sample std) over the chunks. ``update(imgs)``;
    ``feature`` an ``nn.Module`` giving [N, C] logits or an InceptionV3 layer (default
    'logits_unbiased'; torch-fidelity with weights in the torch hub cache, nothing downloads);
    ``normalize``: float images in [0, 1] become uint8 first (for any extractor, as torchmetrics).

    State: float32 logits, 4 C bytes per image (module docstring).

    Differences from torchmetrics: softmax, logs and means in float64 (torchmetrics: the
    logits' dtype); logits kept in float32; results in ``self.dtype``; no weights are
    downloaded; NaN or infinite logits (or float64 ones beyond float32's range), a width that
    changes, or not one row per image raise ValueError with the state unchanged;
    ``normalize=True`` with images that are not float is a TypeError (torchmetrics multiplies
    them by 255 in their own dtype); ``splits`` must be a positive int; compute with no image
    raises NotComputableError; no warning at construction.

        >>> import torch
        >>> from torchtally.image import InceptionScore
        >>> _ = torch.manual_seed(0)
        >>> net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 5))
        >>> inception = InceptionScore(feature=net, splits=2)
        >>> _ = inception.update(torch.rand(20, 3, 2, 2))
        >>> inception.compute()
        (tensor(1.0105), tensor(5.4945e-05))
    """

    is_differentiable = False
    feature_network: str = "inception"  # the attribute holding the extractor (FeatureShare shares it)
    higher_is_better = True
    full_state_update = False
    traceable_update = False
    plot_lower_bound = 0.0
    if TYPE_CHECKING:  # declared states, read as attributes
        features: Tensor
        feature_width: Tensor
        feature_width_min: Tensor

    def __init__(
        self,
        feature: Union[str, int, nn.Module] = "logits_unbiased",
        splits: int = 10,
        normalize: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.inception, _ = resolve_extractor(type(self).__name__, feature, list(LAYERS))
        self.normalize = check_bool(normalize, "normalize")
        if not (isinstance(splits, int) and not isinstance(splits, bool) and splits > 0):
            raise ValueError(f"Argument `splits` expected to be integer larger than 0, got {splits!r}")
        self.splits = splits
        self.add_state("features", torch.zeros(0, dtype=torch.float32), reduce="cat")
        self.add_state("feature_width", torch.tensor(0, dtype=torch.int64), reduce="max")
        # min-reduced too: ranks whose extractors differ in width raise (generative_features.agreed_width)
        self.add_state("feature_width_min", torch.tensor(NO_WIDTH, dtype=torch.int64), reduce="min")

    def update(self, imgs: Tensor) -> None:
        width = int(self.feature_width) or None
        # a new block: the extractor's own logits are never kept (it may refill one buffer)
        rows, found = extract_rows(self.inception, imgs, self.normalize, width, what="logits")
        self.append_state("features", rows, copy=False)
        if width is None:  # the first rows: both widths set (later rows were checked against them)
            self.feature_width.fill_(found)
            self.feature_width_min.fill_(found)

    def compute(self) -> Tuple[Tensor, Tensor]:
        width = agreed_width(self.feature_width, self.feature_width_min, type(self).__name__)
        if width < 1:
            raise NotComputableError("InceptionScore: no images were seen; update with at least one batch")
        scores = inception_splits(feature_rows(self.features, width, "features"), self.splits)
        return self.in_result_dtype(scores.mean()), self.in_result_dtype(scores.std())
