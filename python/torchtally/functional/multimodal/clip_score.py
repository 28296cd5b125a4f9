"""``clip_score`` (torchmetrics.functional.multimodal.clip_score's names): 100 times the cosine
of the CLIP embeddings of paired images and/or captions, averaged and clipped at 0. The model is
the user's (torchtally.functional.multimodal.clip_models); nothing is downloaded."""

from typing import Any, List, Tuple, Union

import torch
from torch import Tensor

from .clip_models import as_items, detect_modality, model_device, resolve_clip, side_features

__all__ = ["clip_score", "pair_scores"]


def pair_scores(source: Any, target: Any, model: Any, processor: Any) -> Tuple[Tensor, torch.device]:
    """Float64 scores [N], 100 cos(E_source, E_target), of N paired items, and the device the
    model ran on (the images' device when there are images, as torchmetrics moves the model there;
    else the model's). Raises before running the model on mismatched or malformed inputs."""
    source_modality = detect_modality(source, "source")
    target_modality = detect_modality(target, "target")
    source_items = as_items(source, source_modality, "source")
    target_items = as_items(target, target_modality, "target")
    if len(source_items) != len(target_items):
        raise ValueError(
            "Expected the number of source and target examples to be the same but got "
            f"{len(source_items)} and {len(target_items)}"
        )
    if source_modality == "image":
        device = source_items[0].device
    elif target_modality == "image":
        device = target_items[0].device
    else:
        device = model_device(model)
    if device != model_device(model) and hasattr(model, "to"):
        model.to(device)
    with torch.no_grad():
        a = side_features(model, processor, source_items, source_modality, device, "source")
        b = side_features(model, processor, target_items, target_modality, device, "target")
    return 100.0 * (a.to(torch.float64) * b.to(torch.float64)).sum(dim=-1), device


def clip_score(
    source: Union[Tensor, List[Tensor], List[str], str],
    target: Union[Tensor, List[Tensor], List[str], str],
    model_name_or_path: Any = "openai/clip-vit-large-patch14",
) -> Tensor:
    """CLIP Score of paired inputs: max(100 mean cos(E_source, E_target), 0) over the pairs, each
    side images (a [N, C, H, W] tensor or a list of [C, H, W] tensors) or captions (a str or a
    list of str), so image-text, image-image and text-text pairs. A float32 scalar.

    The model: ``model_name_or_path`` a callable returning ``(model, processor)`` (torchmetrics'
    way of passing a loaded model), that pair itself, or a local directory written by
    ``save_pretrained`` (a CLIPModel and its CLIPProcessor). Nothing is downloaded: a hub name
    such as the default raises ValueError saying what to pass. With images the model is moved
    to their device (as torchmetrics); texts alone run where the model is.

    Differences from torchmetrics: no download; the cosine is taken in float64 from the model's
    features; the result carries no gradient; a model returning a transformers 5 model output
    (``pooler_output``) works.

        >>> import torch
        >>> from torchtally.functional.multimodal import clip_score
        >>> class Model(torch.nn.Module):  # any model with CLIP's two feature methods
        ...     def get_image_features(self, pixels):
        ...         return pixels.flatten(1)[:, :4]
        ...     def get_text_features(self, ids, mask):
        ...         return ids[:, :4].float()
        >>> def processor(text=None, images=None, **kwargs):
        ...     if images is not None:
        ...         return {"pixel_values": torch.stack(images).float()}
        ...     ids = torch.tensor([[float(len(t)), 1.0, 0.0, 1.0] for t in text])
        ...     return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        >>> image = torch.ones(3, 2, 2)
        >>> clip_score(image, "a photo", lambda: (Model(), processor))
        tensor(63.0126)
    """
    model, processor = resolve_clip(model_name_or_path, "clip_score")
    scores, _ = pair_scores(source, target, model, processor)
    return scores.mean().clamp(min=0).to(torch.float32)
