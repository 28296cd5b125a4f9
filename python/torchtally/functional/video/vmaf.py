"""``video_multi_method_assessment_fusion`` and ``calculate_luma``
(torchmetrics.functional.video.vmaf's names): Netflix's VMAF per frame, from a VMAF model.

The model: ``model=``, either an object with vmaf-torch's interface (``compute_vmaf_score(ref,
dist)`` giving the per-frame scores [F] or [F, 1]; ``table(ref, dist)`` giving a table of
per-frame columns: ``vmaf``, ``integer_motion2``, ... and ``Frame``) or a callable
``model(ref, dist)`` giving the scores (``features=False``) or a mapping of columns
(``features=True``); ``ref`` and ``dist`` are a video's luma frames [F, 1, H, W] in 0..255.
Without one, vmaf-torch's ``VMAF()`` (its model ships in the package; nothing downloads)."""

from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np
import torch
from torch import Tensor

__all__ = ["video_multi_method_assessment_fusion", "calculate_luma", "vmaf_frames", "resolve_vmaf_model"]

FEATURES: Tuple[str, ...] = ("vmaf", "integer_motion2", "integer_motion", "integer_adm2")
FEATURES += tuple(f"integer_adm_scale{i}" for i in range(4)) + tuple(f"integer_vif_scale{i}" for i in range(4))


def calculate_luma(video: Tensor) -> Tensor:
    """BT.601 luma of RGB video [B, 3, F, H, W] in [0, 1], scaled to 0..255: [B, 1, F, H, W]."""
    r, g, b = video[:, 0], video[:, 1], video[:, 2]
    return (0.299 * r + 0.587 * g + 0.114 * b).unsqueeze(1) * 255


def resolve_vmaf_model(model: Any) -> Any:
    if model is not None:
        if not callable(model) and not hasattr(model, "compute_vmaf_score"):
            raise TypeError(f"model: expected a VMAF model or a callable, got {type(model).__name__}")
        return model
    try:
        from vmaf_torch import VMAF  # type: ignore[import-not-found]
    except ImportError as err:
        raise ModuleNotFoundError(
            "VMAF needs a model: install vmaf-torch (`pip install vmaf-torch`, whose VMAF() is used) or pass "
            "`model=`, an object with vmaf-torch's compute_vmaf_score / table or a callable model(ref, dist) "
            "on a video's luma frames [F, 1, H, W] in 0..255"
        ) from err
    return VMAF()


def _check_videos(preds: Any, target: Any) -> None:
    for name, v in (("preds", preds), ("target", target)):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(v).__name__}")
        if not v.is_floating_point():
            raise TypeError(f"{name}: expected a floating tensor with values in [0, 1], got {v.dtype}")
        if v.dim() != 5 or v.shape[1] != 3:
            raise ValueError(f"{name}: expected RGB video of shape [B, 3, F, H, W], got {tuple(v.shape)}")
        if not bool(torch.isfinite(v).all()):  # else the model's NaN score would blame preds
            raise ValueError(f"{name}: expected finite values, got NaN or infinity")
    if preds.shape != target.shape:
        raise ValueError(
            f"preds and target: expected the same shape, got {tuple(preds.shape)} and {tuple(target.shape)}"
        )


def _column(values: Any) -> Tensor:
    if hasattr(values, "to_numpy"):  # a pandas column
        values = values.to_numpy()
    if isinstance(values, Tensor):
        return values.detach().to("cpu", torch.float64).reshape(-1)
    return torch.from_numpy(np.asarray(values, dtype=np.float64)).reshape(-1)


def vmaf_frames(preds: Tensor, target: Tensor, features: bool, model: Any) -> List[Tensor]:
    """One float64 [F, k] tensor per video: k = 1 (vmaf) or 12 (the columns in ``FEATURES``'
    order)."""
    _check_videos(preds, target)
    ref_luma, dist_luma = calculate_luma(target), calculate_luma(preds)
    out = []
    with torch.no_grad():
        for v in range(preds.shape[0]):
            ref, dist = ref_luma[v].transpose(0, 1), dist_luma[v].transpose(0, 1)  # [F, 1, H, W]
            if features:
                table = model.table(ref, dist) if hasattr(model, "table") else model(ref, dist)
                if not isinstance(table, Mapping) and not hasattr(table, "columns"):
                    raise TypeError("model: with features=True it must give a table or mapping of columns")
                missing = [c for c in FEATURES if c not in table]
                if missing:
                    raise ValueError(f"model: its table lacks the columns {missing}")
                rows = torch.stack([_column(table[c]) for c in FEATURES], dim=1)
            else:
                scores = (
                    model.compute_vmaf_score(ref, dist) if hasattr(model, "compute_vmaf_score") else model(ref, dist)
                )
                rows = _column(scores).reshape(-1, 1)
            if rows.shape[0] != ref.shape[0]:
                raise ValueError(f"model: expected one score per frame ({ref.shape[0]}), got {rows.shape[0]}")
            out.append(rows)
    return out


def video_multi_method_assessment_fusion(
    preds: Tensor, target: Tensor, features: bool = False, *, model: Optional[Any] = None
) -> Union[Tensor, Dict[str, Tensor]]:
    """VMAF of each frame of videos ``preds`` against ``target``, RGB [B, 3, F, H, W] in
    [0, 1]: [B, F] in ``preds``' dtype, or with ``features`` a dict of [B, F] tensors (``vmaf``
    and the elementary features). The model: ``model=`` (module docstring) or vmaf-torch's.

        >>> import torch
        >>> from torchtally.functional.video import video_multi_method_assessment_fusion
        >>> def model(ref, dist):  # a stand-in: 100 minus the mean absolute luma error per frame
        ...     return 100 - (ref - dist).abs().mean(dim=(1, 2, 3))
        >>> preds = torch.zeros(1, 3, 2, 4, 4)
        >>> target = torch.full((1, 3, 2, 4, 4), 0.1)
        >>> video_multi_method_assessment_fusion(preds, target, model=model)
        tensor([[74.5000, 74.5000]])
    """
    if not isinstance(features, bool):
        raise ValueError(f"Argument `features` should be a boolean, but got {features}.")
    model = resolve_vmaf_model(model)
    frames = vmaf_frames(preds, target, features, model)
    dtype = preds.dtype
    if not features:
        return torch.stack([f[:, 0] for f in frames]).to(dtype)
    return {name: torch.stack([f[:, i] for f in frames]).to(dtype) for i, name in enumerate(FEATURES)}
