"""Kernel Inception Distance and Inception Score: state declarations; the features come from
torchtally.functional.image.generative_features, the scores from
torchtally.functional.image.generative_scores.

Both draw random subsets of every image at compute, so both keep every image's features: flat
float32 ``cat`` states (KID: real and fake features, 4 D bytes per image, 8 KiB at D = 2048,
torchtally.image.feature_rows; IS: the logits, 4 C bytes per image, about 4 KiB for
InceptionV3's 1008 classes) and the int64 width, max- and min-reduced, so that the extractor's
width need not be known before the first batch and extractors of different widths on different
ranks raise SyncError. Scores are taken in float64 and returned in ``self.dtype``.

The random draws are torchmetrics': ``torch.randperm`` on torch's default generator in the
same order, so under the same ``torch.manual_seed`` (and the same feature order: ranks'
features are concatenated in rank order) the same subsets are drawn. Every rank draws from its
own generator: seed them alike for the same value on every rank.
"""

from typing import Any, List, Optional, Tuple, Union

from torch import Tensor, nn

from ..functional.image.generative_features import resolve_extractor
from ..functional.image.generative_scores import kid_subsets
from .feature_rows import RealFakeFeatureRows

__all__ = ["KernelInceptionDistance"]

LAYERS: List[Union[int, str]] = ["logits_unbiased", 64, 192, 768, 2048]


class KernelInceptionDistance(RealFakeFeatureRows):
    """Kernel Inception Distance: the unbiased squared MMD, with the polynomial kernel
    ``(gamma <x, y> + coef) ** degree`` (gamma None: 1 / D), between the features of real and
    generated images, averaged over ``subsets`` random subsets of ``subset_size`` images of
    each; ``compute()`` returns (mean, population std) over the subsets. ``update(imgs,
    real)``; ``feature`` an ``nn.Module`` giving [N, D] features or an InceptionV3 layer
    ('logits_unbiased', 64, 192, 768, 2048; torch-fidelity with weights in the torch hub cache,
    nothing downloads); ``normalize``: float images in [0, 1] become uint8 for the built-in
    extractor.

    State: float32 features, 4 D bytes per image (module docstring).

    Differences from torchmetrics: the kernel sums are taken in float64 (torchmetrics: in the
    features' dtype); features are kept in float32; results in ``self.dtype``; no weights are
    downloaded; NaN or infinite features (or float64 ones beyond float32's range), a width that
    changes, or not one row per image raise ValueError with the state unchanged; ``real`` must
    be a bool; no warning at construction.

        >>> import torch
        >>> from torchtally.image import KernelInceptionDistance
        >>> _ = torch.manual_seed(0)
        >>> net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 4))
        >>> kid = KernelInceptionDistance(feature=net, subsets=3, subset_size=10)
        >>> _ = kid.update(torch.rand(20, 3, 2, 2), real=True)
        >>> _ = kid.update(torch.rand(20, 3, 2, 2) * 0.5, real=False)
        >>> kid.compute()
        (tensor(0.0488), tensor(0.0154))
    """

    plot_upper_bound = 1.0

    def __init__(
        self,
        feature: Union[str, int, nn.Module] = 2048,
        subsets: int = 100,
        subset_size: int = 1000,
        degree: int = 3,
        gamma: Optional[float] = None,
        coef: float = 1.0,
        reset_real_features: bool = True,
        normalize: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.inception, self.used_custom_model = resolve_extractor(type(self).__name__, feature, list(LAYERS))
        for name, value in (("subsets", subsets), ("subset_size", subset_size), ("degree", degree)):
            if not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
                raise ValueError(f"Argument `{name}` expected to be integer larger than 0")
        if gamma is not None and not (isinstance(gamma, float) and gamma > 0):
            raise ValueError("Argument `gamma` expected to be `None` or float larger than 0")
        if not (isinstance(coef, float) and coef > 0):
            raise ValueError("Argument `coef` expected to be float larger than 0")
        self.subsets, self.subset_size, self.degree, self.gamma, self.coef = subsets, subset_size, degree, gamma, coef
        self.declare_feature_rows(reset_real_features, normalize)

    def compute(self) -> Tuple[Tensor, Tensor]:
        rows = self.rows()
        if rows is None:
            raise ValueError("Argument `subset_size` should be smaller than the number of samples: no images were seen")
        real, fake = rows
        scores = kid_subsets(real, fake, self.subsets, self.subset_size, self.degree, self.gamma, self.coef)
        return self.in_result_dtype(scores.mean()), self.in_result_dtype(scores.std(unbiased=False))
