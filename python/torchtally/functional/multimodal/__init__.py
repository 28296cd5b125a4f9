"""Multimodal: the public functions (torchmetrics.functional.multimodal's names and signatures).

The CLIP metrics take the user's model and processor (or a local directory); nothing is
downloaded (torchtally.functional.multimodal.clip_models)."""

from .clip_iqa import clip_image_quality_assessment
from .clip_score import clip_score
from .lve import lip_vertex_error

__all__ = ["lip_vertex_error", "clip_image_quality_assessment", "clip_score"]
