"""``clip_image_quality_assessment`` (torchmetrics.functional.multimodal.clip_iqa's names):
CLIP-IQA, per image and per pair of prompts (positive, negative), the softmax probability that
the image's CLIP embedding is closer to the positive prompt's. The model is the user's
(torchtally.functional.multimodal.clip_models); nothing is downloaded."""

from typing import Any, Dict, List, Tuple, Union

import torch
from torch import Tensor

from .clip_models import features_tensor, model_device, processed_images, resolve_clip, unit_rows

__all__ = ["clip_image_quality_assessment", "format_prompts", "anchor_vectors", "image_probs", "as_result"]

# The built-in prompt pairs (positive, negative), the CLIP-IQA paper's.
PROMPTS: Dict[str, Tuple[str, str]] = {
    "quality": ("Good photo.", "Bad photo."),
    "brightness": ("Bright photo.", "Dark photo."),
    "noisiness": ("Clean photo.", "Noisy photo."),
    "colorfullness": ("Colorful photo.", "Dull photo."),
    "sharpness": ("Sharp photo.", "Blurry photo."),
    "contrast": ("High contrast photo.", "Low contrast photo."),
    "complexity": ("Complex photo.", "Simple photo."),
    "natural": ("Natural photo.", "Synthetic photo."),
    "happy": ("Happy photo.", "Sad photo."),
    "scary": ("Scary photo.", "Peaceful photo."),
    "new": ("New photo.", "Old photo."),
    "warm": ("Warm photo.", "Cold photo."),
    "real": ("Real photo.", "Abstract photo."),
    "beautiful": ("Beautiful photo.", "Ugly photo."),
    "lonely": ("Lonely photo.", "Sociable photo."),
    "relaxing": ("Relaxing photo.", "Stressful photo."),
}


def format_prompts(prompts: Any) -> Tuple[List[str], List[str]]:
    """The prompt texts (two per entry) and the entries' names: a built-in name, or a (positive,
    negative) pair named ``user_defined_<i>``. ValueError for anything else."""
    if not isinstance(prompts, tuple):
        raise ValueError("Argument `prompts` must be a tuple containing strings or tuples of strings")
    texts: List[str] = []
    names: List[str] = []
    for p in prompts:
        if isinstance(p, str):
            if p not in PROMPTS:
                raise ValueError(
                    f"All elements of `prompts` must be one of {list(PROMPTS)} if not custom tuple prompts, got {p}."
                )
            names.append(p)
            texts.extend(PROMPTS[p])
        elif isinstance(p, tuple):
            if len(p) != 2 or not all(isinstance(t, str) for t in p):
                raise ValueError("If a tuple is provided in argument `prompts`, it must be of length 2 (two strings)")
            names.append(f"user_defined_{sum(n.startswith('user_defined_') for n in names)}")
            texts.extend(p)
        else:
            raise ValueError("Argument `prompts` must be a tuple containing strings or tuples of strings")
    if not names:
        raise ValueError("Argument `prompts` must name at least one prompt")
    return texts, names


def check_data_range(data_range: Any) -> float:
    """``data_range`` as a positive float, or ValueError."""
    if isinstance(data_range, bool) or not isinstance(data_range, (int, float)) or not data_range > 0:
        raise ValueError(f"Argument `data_range` should be a positive number, got {data_range!r}")
    return float(data_range)


def resolve_iqa_model(model_name_or_path: Any, metric: str) -> Tuple[Any, Any]:
    """The user's CLIP model and processor; ``"clip_iqa"`` (piq's weights) is never downloaded."""
    if model_name_or_path == "clip_iqa":
        raise ValueError(
            f"{metric}: `model_name_or_path='clip_iqa'` (the default) needs piq's CLIP weights, which torchtally "
            "never downloads: pass `model_name_or_path` as a local directory written by `save_pretrained` (a "
            "CLIPModel and its CLIPProcessor), or the loaded model as a callable returning `(model, processor)`"
        )
    return resolve_clip(model_name_or_path, metric)


def anchor_vectors(model: Any, processor: Any, texts: List[str], device: torch.device) -> Tensor:
    """Unit-normalised text features [2K, E] of the prompts."""
    processed = processor(text=texts, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model.get_text_features(processed["input_ids"].to(device), processed["attention_mask"].to(device))
    return unit_rows(features_tensor(out, "get_text_features"))


def checked_images(images: Any) -> Tensor:
    """``images`` as a [N, C, H, W] tensor, or TypeError/ValueError."""
    if not isinstance(images, Tensor):
        raise TypeError(f"Expected `images` to be a [N, C, H, W] tensor, got {type(images).__name__}")
    if images.ndim != 4:
        raise ValueError(f"Expected `images` to be a [N, C, H, W] tensor, got shape {tuple(images.shape)}")
    if images.dtype.is_floating_point and not bool(torch.isfinite(images).all()):
        raise ValueError("`images` holds NaN or infinite values")
    return images


def image_probs(model: Any, processor: Any, images: Tensor, anchors: Tensor, data_range: float) -> Tensor:
    """Per image and prompt pair, the probability of the positive prompt [N, K] (float32):
    softmax over (positive, negative) of 100 cos(image, prompt)."""
    device = images.device
    if device != model_device(model) and hasattr(model, "to"):
        model.to(device)
    scaled = images / float(data_range)
    processed = processed_images(processor, list(scaled), "images")
    with torch.no_grad():
        out = model.get_image_features(processed["pixel_values"].to(device))
    features = unit_rows(features_tensor(out, "get_image_features"))
    logits = 100 * features @ anchors.to(device=features.device, dtype=features.dtype).t()
    probs = logits.reshape(logits.shape[0], -1, 2).softmax(-1)[:, :, 0]
    return probs.to(torch.float32)


def as_result(probs: Tensor, names: List[str]) -> Union[Tensor, Dict[str, Tensor]]:
    """torchmetrics' result: the probabilities squeezed for one prompt, else a dict by name."""
    if len(names) == 1:
        return probs.squeeze()
    return {name: probs[:, i] for i, name in enumerate(names)}


def clip_image_quality_assessment(
    images: Tensor,
    model_name_or_path: Any = "clip_iqa",
    data_range: float = 1.0,
    prompts: Tuple[Union[str, Tuple[str, str]], ...] = ("quality",),
) -> Union[Tensor, Dict[str, Tensor]]:
    """CLIP-IQA of each image [N, C, H, W] (values up to ``data_range``): for each prompt pair,
    the softmax probability (at temperature 1/100) that the image's CLIP embedding is closer to
    the positive prompt than to the negative one. ``prompts``: built-in names ("quality",
    "brightness", "noisiness", "colorfullness", "sharpness", "contrast", "complexity",
    "natural", "happy", "scary", "new", "warm", "real", "beautiful", "lonely", "relaxing") or
    (positive, negative) pairs, named ``user_defined_<i>``. Returns a tensor [N] (squeezed) for
    one prompt, else a dict of them by name.

    The model: ``model_name_or_path`` a callable returning ``(model, processor)``, that pair,
    or a local directory written by ``save_pretrained``. Nothing is downloaded: the default
    ``"clip_iqa"`` (piq's weights) and hub names raise ValueError saying what to pass.

    Differences from torchmetrics: no download; probabilities in float32; a non-positive
    ``data_range`` and NaN / inf images raise ValueError.

        >>> import torch
        >>> from torchtally.functional.multimodal import clip_image_quality_assessment
        >>> class Model(torch.nn.Module):  # any model with CLIP's two feature methods
        ...     def get_image_features(self, pixels):
        ...         return pixels.mean(dim=(2, 3))[:, :2]
        ...     def get_text_features(self, ids, mask):
        ...         return ids.float()
        >>> def processor(text=None, images=None, **kwargs):
        ...     if images is not None:
        ...         return {"pixel_values": torch.stack(images)}
        ...     ids = torch.tensor([[1, 0] if t.startswith("Good") else [0, 1] for t in text])
        ...     return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        >>> images = torch.zeros(2, 3, 4, 4)
        >>> images[0, 0], images[0, 1], images[1, 0], images[1, 1] = 0.3, 0.29, 0.29, 0.3
        >>> clip_image_quality_assessment(images, lambda: (Model(), processor))
        tensor([0.9166, 0.0834])
    """
    texts, names = format_prompts(prompts)
    data_range = check_data_range(data_range)
    images = checked_images(images)
    model, processor = resolve_iqa_model(model_name_or_path, "clip_image_quality_assessment")
    if images.device != model_device(model) and hasattr(model, "to"):
        model.to(images.device)
    anchors = anchor_vectors(model, processor, texts, images.device)
    return as_result(image_probs(model, processor, images, anchors, data_range), names)
