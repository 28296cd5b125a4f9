"""VideoMultiMethodAssessmentFusion: VMAF of every frame of every video seen
(torchtally.functional.video.vmaf).

State, both "cat": ``frame_scores`` float64 rows of k = 1 (vmaf) or 12 (vmaf and the 11
elementary features) per frame, 8 k bytes per frame, and ``frame_counts`` int64, one per video
(8 bytes per video). A sync is the header and one padded all_gather per dtype (two)."""

from typing import TYPE_CHECKING, Any, Dict, Optional, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.video.vmaf import FEATURES, resolve_vmaf_model, vmaf_frames

__all__ = ["VideoMultiMethodAssessmentFusion"]


class VideoMultiMethodAssessmentFusion(Metric):
    """VMAF of each frame of videos ``preds`` against ``target``, RGB [B, 3, F, H, W] in
    [0, 1]: ``update(preds, target)``; ``compute`` gives [videos, F] (every video must have the
    same frame count, as in torchmetrics), or with ``features`` a dict of them: ``vmaf`` and the
    11 elementary features. The model: ``model=``, an object with vmaf-torch's
    ``compute_vmaf_score`` / ``table`` or a callable ``model(ref, dist)`` on a video's luma
    frames [F, 1, H, W] in 0..255; without one, vmaf-torch's ``VMAF()`` (ModuleNotFoundError
    naming vmaf-torch when it is not installed). State: float64 scores, 8 bytes per frame (96
    with ``features``), and an int64 frame count per video (8 bytes); a sync is the header and
    two padded all_gathers.

    Differences from torchmetrics: ``model=`` may be given; results are in ``self.dtype``
    (torchmetrics: the videos' dtype); a missing vmaf-torch is a ModuleNotFoundError
    (torchmetrics: RuntimeError).

        >>> import torch
        >>> from torchtally.video import VideoMultiMethodAssessmentFusion
        >>> def model(ref, dist):  # a stand-in: 100 minus the mean absolute luma error per frame
        ...     return 100 - (ref - dist).abs().mean(dim=(1, 2, 3))
        >>> metric = VideoMultiMethodAssessmentFusion(model=model)
        >>> metric.update(torch.zeros(2, 3, 2, 4, 4), torch.full((2, 3, 2, 4, 4), 0.1)).compute()
        tensor([[74.5000, 74.5000],
                [74.5000, 74.5000]])
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    traceable_update = False
    plot_lower_bound = 0.0
    plot_upper_bound = 100.0
    if TYPE_CHECKING:  # declared states, read as attributes
        frame_scores: Tensor
        frame_counts: Tensor

    def __init__(self, features: bool = False, *, model: Optional[Any] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(features, bool):
            raise ValueError(f"Argument `features` should be a boolean, but got {features}.")
        self.features = features
        self._model = resolve_vmaf_model(model)
        width = len(FEATURES) if features else 1
        self.add_state("frame_scores", torch.empty(0, width, dtype=torch.float64), reduce="cat")
        self.add_state("frame_counts", torch.empty(0, dtype=torch.int64), reduce="cat")

    def update(self, preds: Tensor, target: Tensor) -> None:
        frames = vmaf_frames(preds, target, self.features, self._model)
        if not frames:
            return
        rows = torch.cat(frames)
        if not bool(torch.isfinite(rows).all()):
            raise ValueError("preds: the model gave a NaN or infinite score")
        counts = torch.tensor([f.shape[0] for f in frames], dtype=torch.int64)
        self.append_state("frame_scores", rows, copy=False)
        self.append_state("frame_counts", counts, copy=False)

    def compute(self) -> Union[Tensor, Dict[str, Tensor]]:
        counts = self.frame_counts
        if counts.numel() and bool((counts != counts[0]).any()):
            raise ValueError(f"VMAF: the videos have different frame counts {sorted(set(counts.tolist()))}")
        per = int(counts[0]) if counts.numel() else 0
        table = self.in_result_dtype(self.frame_scores.reshape(counts.numel(), per, self.frame_scores.shape[1]))
        if not self.features:
            return table[..., 0]
        return {name: table[..., i] for i, name in enumerate(FEATURES)}

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "frame_counts")
