"""The CLIP model behind CLIPScore and CLIP-IQA: the user's, never a download, and its features.

A model comes as torchmetrics takes it, ``model_name_or_path`` a callable returning ``(model,
processor)``, or as that pair itself, or as a local directory written by ``save_pretrained``
(a ``CLIPModel`` and its ``CLIPProcessor``), loaded with ``local_files_only=True``. A hub name
that is not a local directory raises, saying what to pass. The model needs torchmetrics'
``get_image_features`` / ``get_text_features``; their output may be a tensor (transformers 4)
or a model output whose ``pooler_output`` holds the projected features (transformers 5).
"""

import os
import warnings
from typing import Any, List, Sequence, Tuple, Union

import torch
from torch import Tensor
from torch.nn import Module

__all__: List[str] = []

Inputs = Union[Tensor, Sequence[Tensor], Sequence[str], str]


def resolve_clip(model_name_or_path: Any, metric: str) -> Tuple[Module, Any]:
    """The (model, processor) pair to use, or an error saying what to pass."""
    how = (
        "pass `model_name_or_path` as a local directory written by `save_pretrained` (a CLIPModel and its "
        "CLIPProcessor), or the loaded model as a callable returning `(model, processor)` (or that pair)"
    )
    if isinstance(model_name_or_path, Module):
        raise TypeError(f"{metric}: `model_name_or_path` got a bare model; the processor is needed too: {how}")
    if isinstance(model_name_or_path, (str, os.PathLike)):
        if not os.path.isdir(model_name_or_path):
            raise ValueError(
                f"{metric}: `model_name_or_path`={model_name_or_path!r} is not a local directory. torchtally never "
                f"downloads a model: {how}"
            )
        from transformers import CLIPModel, CLIPProcessor

        path = os.fspath(model_name_or_path)
        pair: Any = (
            CLIPModel.from_pretrained(path, local_files_only=True),
            CLIPProcessor.from_pretrained(path, local_files_only=True),
        )
    elif isinstance(model_name_or_path, tuple):
        pair = model_name_or_path
    elif callable(model_name_or_path):
        pair = model_name_or_path()
    else:
        raise TypeError(f"{metric}: `model_name_or_path` of type {type(model_name_or_path).__name__}: {how}")
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise ValueError(f"{metric}: `model_name_or_path` must give a `(model, processor)` pair, got {type(pair)}")
    model, processor = pair
    for method in ("get_image_features", "get_text_features"):
        if not callable(getattr(model, method, None)):
            raise TypeError(f"{metric}: the model must have a `{method}` method (a CLIP model), got {type(model)}")
    if not callable(processor):
        raise TypeError(f"{metric}: the processor must be callable (a CLIPProcessor), got {type(processor)}")
    if isinstance(model, Module):
        model.eval()
    return model, processor


def model_device(model: Any) -> torch.device:
    """Where the model's parameters are (CPU for a model without any)."""
    if isinstance(model, Module):
        for p in model.parameters():
            return p.device
    return torch.device("cpu")


def detect_modality(data: Any, name: str) -> str:
    """ "image" (a tensor, or a list of tensors) or "text" (a str, or a list of str)."""
    if isinstance(data, Tensor):
        return "image"
    if isinstance(data, str):
        return "text"
    if isinstance(data, (list, tuple)):
        if len(data) == 0:
            raise ValueError(f"`{name}`: empty input list")
        if all(isinstance(x, Tensor) for x in data):
            return "image"
        if all(isinstance(x, str) for x in data):
            return "text"
    raise TypeError(
        f"`{name}`: expected images (a [N, C, H, W] tensor or a list of [C, H, W] tensors) or text (a str or a "
        f"list of str), got {type(data).__name__}"
    )


def image_list(images: Any, name: str) -> List[Tensor]:
    """A [C, H, W] image, a [N, C, H, W] batch or a list of [C, H, W] images as a list of images."""
    items = [images] if isinstance(images, Tensor) and images.ndim == 3 else list(images)
    if not all(i.ndim == 3 for i in items):
        raise ValueError(f"`{name}`: expected all images to be 3d [C, H, W] (or one [N, C, H, W] tensor)")
    # checked here: the processor's own refusal of NaN names no argument
    if items and not all(bool(torch.isfinite(i).all()) for i in items if i.is_floating_point()):
        raise ValueError(f"{name}: expected finite pixel values, got NaN or infinity")
    return items


def as_items(data: Any, modality: str, name: str) -> List[Any]:
    """The inputs of one side as a list of images or of strings."""
    if modality == "image":
        return image_list(data, name)
    return [data] if isinstance(data, str) else list(data)


def features_tensor(out: Any, what: str) -> Tensor:
    """The features from ``get_*_features``: a tensor, or a model output's ``pooler_output``."""
    if isinstance(out, Tensor):
        return out
    pooled = getattr(out, "pooler_output", None)
    if isinstance(pooled, Tensor):
        return pooled
    raise TypeError(f"the model's {what} returned {type(out).__name__}, expected a tensor of features")


def processed_images(processor: Any, images: List[Tensor], name: str) -> Any:
    """``processor(images=...)``; its ValueError (pixels it cannot convert) names ``name``."""
    try:
        return processor(images=[i.cpu() for i in images], return_tensors="pt", padding=True)
    except ValueError as exc:
        raise ValueError(f"{name}: the processor refused the images: {exc}") from exc


def image_features(
    model: Any, processor: Any, images: List[Tensor], device: torch.device, name: str = "images"
) -> Tensor:
    """The model's unit-normalised features [N, E] of the images (through the processor)."""
    processed = processed_images(processor, images, name)
    out = model.get_image_features(processed["pixel_values"].to(device))
    return unit_rows(features_tensor(out, "get_image_features"))


def text_features(model: Any, processor: Any, text: List[str], device: torch.device) -> Tensor:
    """The model's unit-normalised features [N, E] of the texts; captions longer than the text
    model's positions are cut there, with a warning (as torchmetrics)."""
    processed = processor(text=text, return_tensors="pt", padding=True)
    ids, mask = processed["input_ids"], processed["attention_mask"]
    limit = getattr(getattr(getattr(model, "config", None), "text_config", None), "max_position_embeddings", None)
    if isinstance(limit, int) and mask.shape[-1] > limit:
        warnings.warn(
            f"Encountered caption longer than max_position_embeddings={limit}. Will truncate captions to this "
            "length. If longer captions are needed, use a model that supports longer sequences.",
            UserWarning,
            stacklevel=3,
        )
        ids, mask = ids[..., :limit], mask[..., :limit]
    out = model.get_text_features(ids.to(device), mask.to(device))
    return unit_rows(features_tensor(out, "get_text_features"))


def unit_rows(x: Tensor) -> Tensor:
    """Rows divided by their L2 norm."""
    return x / x.norm(p=2, dim=-1, keepdim=True)


def side_features(
    model: Any, processor: Any, items: List[Any], modality: str, device: torch.device, name: str = "source"
) -> Tensor:
    """Unit-normalised features of one side's images or texts (``name``: that side, for errors)."""
    if modality == "image":
        return image_features(model, processor, items, device, name)
    return text_features(model, processor, items, device)
