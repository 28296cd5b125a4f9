"""CLIPImageQualityAssessment: state declarations; the prompts' anchors and the images'
probabilities come from torchtally.functional.multimodal.clip_iqa.

State: ``probs``, a float32 "cat" state of one probability per image and prompt pair (4 K
bytes per image for K pairs), synced in the one padded all_gather of float32 rows, in rank
order. torchmetrics' result is one value per image, so the rows are kept (no sum would do).
The prompts' anchor vectors are computed once at construction and are not state (torchmetrics
keeps them as a buffer in ``state_dict``); the model is held outside the module tree.
"""

from typing import TYPE_CHECKING, Any, Dict, Tuple, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..functional.multimodal.clip_iqa import (
    anchor_vectors,
    as_result,
    check_data_range,
    checked_images,
    format_prompts,
    image_probs,
    resolve_iqa_model,
)
from ..functional.multimodal.clip_models import model_device
from .clip_score import ModelHolder

__all__ = ["CLIPImageQualityAssessment"]


class CLIPImageQualityAssessment(Metric):
    """CLIP-IQA of every image seen: per image and prompt pair (positive, negative), the softmax
    probability (at temperature 1/100) that the image's CLIP embedding is closer to the positive
    prompt. ``update(images)``: [N, C, H, W] with values up to ``data_range``. ``prompts``:
    built-in names ("quality", "brightness", "noisiness", "colorfullness", "sharpness",
    "contrast", "complexity", "natural", "happy", "scary", "new", "warm", "real", "beautiful",
    "lonely", "relaxing") or (positive, negative) pairs, named ``user_defined_<i>``.
    ``compute()``: the probabilities of every image in update order (rank order across ranks),
    squeezed, for one prompt; else a dict of them by prompt name.

    The model: ``model_name_or_path`` a callable returning ``(model, processor)``, that pair, or
    a local directory written by ``save_pretrained``. Nothing is downloaded: the default
    ``"clip_iqa"`` (piq's weights) and hub names raise ValueError saying what to pass. The
    model runs on the images' device (moved there, as torchmetrics).

    State: a float32 ``cat`` state of K probabilities per image (4 K bytes per image), synced in
    one padded all_gather of float32 rows.

    Differences from torchmetrics: no download; the anchors are not in ``state_dict`` and the
    model is not a submodule; NaN / inf images and a non-[N, C, H, W] input raise ValueError /
    TypeError with the state unchanged.

        >>> import torch
        >>> from torchtally.multimodal import CLIPImageQualityAssessment
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
        >>> metric = CLIPImageQualityAssessment(model_name_or_path=lambda: (Model(), processor))
        >>> images = torch.zeros(2, 3, 4, 4)
        >>> images[0, 0], images[0, 1], images[1, 0], images[1, 1] = 0.3, 0.29, 0.29, 0.3
        >>> _ = metric.update(images[:1])
        >>> metric.update(images[1:]).compute()
        tensor([0.9166, 0.0834])
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    traceable_update = False  # the processor and the model run outside the graph
    plot_lower_bound = 0.0
    plot_upper_bound = 100.0
    option_names = ("data_range", "prompts_list", "prompts_name")
    if TYPE_CHECKING:  # declared states, read as attributes
        probs: Tensor

    def __init__(
        self,
        model_name_or_path: Any = "clip_iqa",
        data_range: float = 1.0,
        prompts: Tuple[Union[str, Tuple[str, str]], ...] = ("quality",),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.data_range = check_data_range(data_range)
        self.prompts_list, self.prompts_name = format_prompts(prompts)
        model, processor = resolve_iqa_model(model_name_or_path, "CLIPImageQualityAssessment")
        self._holder = ModelHolder(model, processor)
        self.model_name_or_path = model_name_or_path if isinstance(model_name_or_path, str) else None
        self._anchors = anchor_vectors(model, processor, self.prompts_list, model_device(model))
        self.add_state("probs", torch.empty(0, len(self.prompts_name), dtype=torch.float32), reduce="cat")

    @property
    def model(self) -> Any:
        """The CLIP model (not part of the metric's state or module tree)."""
        return self._holder.model

    @property
    def processor(self) -> Any:
        """The CLIP processor."""
        return self._holder.processor

    @property
    def anchors(self) -> Tensor:
        """The prompts' unit-normalised text features [2 K, E] (not state)."""
        return self._anchors

    def update(self, images: Tensor) -> None:
        images = checked_images(images)
        if images.shape[0] == 0:
            return
        probs = image_probs(self.model, self.processor, images, self._anchors, self.data_range)
        self.append_state("probs", probs.to(self.device), copy=False)

    def compute(self) -> Union[Tensor, Dict[str, Tensor]]:
        return as_result(self.in_result_dtype(self.probs), self.prompts_name)
