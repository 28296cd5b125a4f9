"""Frechet Inception Distance and its memorization-informed variant: state declarations; the
features come from torchtally.functional.image.generative_features, the scores from
torchtally.functional.image.generative_scores.

FrechetInceptionDistance's state, per side (real, fake), all sum-reduced: the float64 feature
sum [D], the float64 sum of the features' outer products [D, D] and the image count, so its
size does not grow with the data (2 * (8 D + 8 D^2 + 8) bytes; 64 MiB at D = 2048) and a sync
over any number of ranks equals one process to float64 rounding. The count is a float64 too
(torchmetrics: int64; exact up to 2^53 images), so the whole state is one float64 buffer and
a sync is the header plus ONE all_reduce (an int64 count would be a second one).

MemorizationInformedFrechetInceptionDistance needs every feature row (the memorization term
compares each real row with every fake one): two ``cat`` states of float32 features, 4 D bytes
per image (8 KiB at D = 2048; torchtally.image.feature_rows, shared with KID).

``reset_real_features=False`` keeps the real side's states across ``reset()`` (through
``states_kept_on_reset``). Results are in ``self.dtype`` (float32 unless ``set_dtype``).
"""

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple, Union

import torch
from torch import Tensor, nn

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..errors import NotComputableError
from ..functional.image.generative_features import (
    check_bool,
    check_real,
    count_features,
    extract_features,
    resolve_extractor,
)
from ..functional.image.generative_scores import frechet_distance, gaussian_from_sums

__all__ = ["FrechetInceptionDistance"]

FID_LAYERS = [64, 192, 768, 2048]


class FrechetInceptionDistance(Metric):
    """Frechet distance between Gaussians fitted to the features of real and of generated
    images. ``update(imgs, real)``: a batch of images and whether they are real; ``feature`` an
    ``nn.Module`` mapping a batch to [N, D] features (its ``num_features`` attribute or one
    forward of a random ``input_img_size`` image gives D), or 64/192/768/2048 for
    torch-fidelity's InceptionV3 from local weights (``feature_extractor_weights_path`` or the
    torch hub cache; nothing downloads). ``normalize``: float images in [0, 1] are turned into
    uint8 for the built-in extractor (a given module gets the images as they are).

    State: float64 sums, outer-product sums and counts (module docstring), so a sync sends
    2 (D^2 + D + 1) numbers in one all_reduce whatever the data size.

    Differences from torchmetrics: the result is in ``self.dtype`` (torchmetrics: the dtype of
    the extractor's output); ``*_features_num_samples`` is float64 (torchmetrics: int64); no
    weights are downloaded (a clear error says what to pass);
    features that are NaN or infinite, of the wrong width or not one row per image raise
    ValueError with the state unchanged; ``real`` must be a bool; the extractor runs without
    gradient.

        >>> import torch
        >>> from torchtally.image import FrechetInceptionDistance
        >>> _ = torch.manual_seed(0)
        >>> net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 4))
        >>> fid = FrechetInceptionDistance(feature=net, normalize=True, input_img_size=(3, 2, 2))
        >>> _ = fid.update(torch.rand(20, 3, 2, 2), real=True)
        >>> _ = fid.update(torch.rand(20, 3, 2, 2) * 0.5, real=False)
        >>> fid.compute()
        tensor(0.0943)
    """

    is_differentiable = False
    feature_network: str = "inception"  # the attribute holding the extractor (FeatureShare shares it)
    higher_is_better = False
    full_state_update = False
    traceable_update = False
    plot_lower_bound = 0.0
    if TYPE_CHECKING:  # declared states, read as attributes
        real_features_sum: Tensor
        real_features_cov_sum: Tensor
        real_features_num_samples: Tensor
        fake_features_sum: Tensor
        fake_features_cov_sum: Tensor
        fake_features_num_samples: Tensor

    def __init__(
        self,
        feature: Union[int, nn.Module] = 2048,
        reset_real_features: bool = True,
        normalize: bool = False,
        input_img_size: Tuple[int, int, int] = (3, 299, 299),
        feature_extractor_weights_path: Optional[str] = None,
        antialias: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.normalize = check_bool(normalize, "normalize")
        self.reset_real_features = check_bool(reset_real_features, "reset_real_features")
        self.inception, self.used_custom_model = resolve_extractor(
            type(self).__name__, feature, list(FID_LAYERS), feature_extractor_weights_path, bool(antialias)
        )
        d = count_features(self.inception, self.normalize, tuple(input_img_size))
        self.num_features = d
        for side in ("real", "fake"):
            self.add_state(f"{side}_features_sum", torch.zeros(d, dtype=torch.float64), reduce="sum")
            self.add_state(f"{side}_features_cov_sum", torch.zeros(d, d, dtype=torch.float64), reduce="sum")
            self.add_state(f"{side}_features_num_samples", torch.tensor(0.0, dtype=torch.float64), reduce="sum")

    def update(self, imgs: Tensor, real: bool) -> None:
        side = "real" if check_real(real) else "fake"
        to_bytes = self.normalize and not self.used_custom_model
        features = extract_features(self.inception, imgs, to_bytes, self.num_features).to(torch.float64)
        getattr(self, f"{side}_features_sum").add_(features.sum(dim=0))
        getattr(self, f"{side}_features_cov_sum").addmm_(features.T, features)
        getattr(self, f"{side}_features_num_samples").add_(features.shape[0])

    def compute(self) -> Tensor:
        n_real, n_fake = int(self.real_features_num_samples), int(self.fake_features_num_samples)
        if n_real < 2 or n_fake < 2:
            raise NotComputableError(
                "More than one sample is required for both the real and fake distributed to compute FID "
                f"(got {n_real} real and {n_fake} fake images)"
            )
        mu1, s1 = gaussian_from_sums(self.real_features_sum, self.real_features_cov_sum, self.real_features_num_samples)
        mu2, s2 = gaussian_from_sums(self.fake_features_sum, self.fake_features_cov_sum, self.fake_features_num_samples)
        return self.in_result_dtype(frechet_distance(mu1, s1, mu2, s2))

    def states_kept_on_reset(self) -> Tuple[str, ...]:
        if self.reset_real_features:
            return ()
        return ("real_features_sum", "real_features_cov_sum", "real_features_num_samples")

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "real_features_num_samples", "fake_features_num_samples")
