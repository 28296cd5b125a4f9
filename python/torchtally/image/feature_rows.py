"""The state KernelInceptionDistance and MemorizationInformedFrechetInceptionDistance share:
every image's feature row, real and fake apart, because their scores compare rows (random
subsets for KID, every real row with every fake one for MiFID).

Two flat float32 ``cat`` states (4 D bytes per image, 8 KiB at D = 2048) and the int64 width,
max- and min-reduced, so that the extractor's width need not be known before the first batch and
ranks (or merged metrics) whose extractors differ in width raise SyncError instead of re-cutting
each other's rows; synced in the plan's one padded all_gather. ``reset_real_features=False``
keeps the real rows (and the widths) across ``reset()``.
"""

from typing import TYPE_CHECKING, Any, Optional, Tuple

import torch
from torch import Tensor

from ..base.metric import Metric
from ..functional.image.generative_features import (
    NO_WIDTH,
    agreed_width,
    check_bool,
    check_real,
    extract_rows,
    feature_rows,
)

__all__ = ["RealFakeFeatureRows"]


class RealFakeFeatureRows(Metric):
    """``update(imgs, real)`` runs ``self.inception`` (set by the subclass, with
    ``used_custom_model``) and appends the rows to the real or the fake side; ``rows()`` gives
    them back as [N, D] float32 matrices. Subclasses call ``declare_feature_rows`` in
    ``__init__`` and score the rows in ``compute``."""

    is_differentiable = False
    feature_network: str = "inception"  # the attribute holding the extractor (FeatureShare shares it)
    higher_is_better = False
    full_state_update = False
    traceable_update = False
    plot_lower_bound = 0.0
    if TYPE_CHECKING:  # declared states, read as attributes
        real_features: Tensor
        fake_features: Tensor
        feature_width: Tensor
        feature_width_min: Tensor

    def declare_feature_rows(self, reset_real_features: Any, normalize: Any) -> None:
        self.reset_real_features = check_bool(reset_real_features, "reset_real_features")
        self.normalize = check_bool(normalize, "normalize")
        self.add_state("real_features", torch.zeros(0, dtype=torch.float32), reduce="cat")
        self.add_state("fake_features", torch.zeros(0, dtype=torch.float32), reduce="cat")
        self.add_state("feature_width", torch.tensor(0, dtype=torch.int64), reduce="max")
        self.add_state("feature_width_min", torch.tensor(NO_WIDTH, dtype=torch.int64), reduce="min")

    def update(self, imgs: Tensor, real: bool) -> None:
        side = "real" if check_real(real) else "fake"
        width = int(self.feature_width) or None
        # a new block: the extractor's own rows are never kept (it may refill one buffer)
        rows, found = extract_rows(self.inception, imgs, self.normalize and not self.used_custom_model, width)
        self.append_state(f"{side}_features", rows, copy=False)
        if width is None:  # the first rows: both widths set (later rows were checked against them)
            self.feature_width.fill_(found)
            self.feature_width_min.fill_(found)

    def rows(self) -> Optional[Tuple[Tensor, Tensor]]:
        """(real [N, D], fake [M, D]) rows, or None before any image was seen."""
        width = agreed_width(self.feature_width, self.feature_width_min, type(self).__name__)
        if width < 1:
            return None
        return feature_rows(self.real_features, width, "real_features"), feature_rows(
            self.fake_features, width, "fake_features"
        )

    def states_kept_on_reset(self) -> Tuple[str, ...]:
        return () if self.reset_real_features else ("real_features", "feature_width", "feature_width_min")
