"""torchmetrics.multimodal's place: ``from torchtally.multimodal import CLIPScore``.

The CLIP metrics take the user's model and processor (or a local directory); nothing is
downloaded."""

from .clip_iqa import CLIPImageQualityAssessment
from .clip_score import CLIPScore
from .lve import LipVertexError

__all__ = ["LipVertexError", "CLIPImageQualityAssessment", "CLIPScore"]
