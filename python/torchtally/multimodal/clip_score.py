"""CLIPScore: state declarations; the features and scores come from
torchtally.functional.multimodal (clip_score.py, clip_models.py).

State: ``score`` float64 (the pairs' scores, 100 cos(E_source, E_target), summed) and
``n_samples`` int64 (the pairs), both sum-reduced: 16 bytes whatever the data, part of one
all_reduce per dtype in a sync. The CLIP model is held outside the module tree: it is not
state (no ``state_dict`` entry, no sync).
"""

from typing import TYPE_CHECKING, Any, Dict, List, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.multimodal.clip_models import resolve_clip
from ..functional.multimodal.clip_score import pair_scores

__all__ = ["CLIPScore"]


class ModelHolder:
    """Holds the CLIP model and processor outside the metric's module tree: they are not metric
    state, and ``.to()`` of the metric leaves the model where the caller put it."""

    def __init__(self, model: Any, processor: Any) -> None:
        self.model = model
        self.processor = processor


class CLIPScore(Metric):
    """CLIP Score: max(100 mean cos(E_source, E_target), 0) over every pair seen, the embeddings
    from a CLIP model. ``update(source, target)``: each side images (a [N, C, H, W] tensor or a
    list of [C, H, W] tensors) or captions (a str or a list of str): image-text, image-image or
    text-text pairs. The result is in ``self.dtype``.

    The model: ``model_name_or_path`` a callable returning ``(model, processor)`` (torchmetrics'
    way of passing a loaded model), that pair itself, or a local directory written by
    ``save_pretrained`` (a CLIPModel and its CLIPProcessor). Nothing is downloaded: a hub name
    such as the default raises ValueError saying what to pass. With images the model is moved to
    their device (as torchmetrics); texts alone run where the model is. ``model`` and
    ``processor`` are attributes, as in torchmetrics, but not submodules.

    State: a float64 sum of scores and an int64 count (16 bytes; a sync is part of one
    all_reduce per dtype).

    Differences from torchmetrics: no download; the scores are summed in float64; the model is
    not part of ``state_dict``; a model returning a transformers 5 model output
    (``pooler_output``) works; bad inputs raise TypeError / ValueError naming ``source`` or
    ``target`` with the state unchanged.

        >>> import torch
        >>> from torchtally.multimodal import CLIPScore
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
        >>> metric = CLIPScore(model_name_or_path=lambda: (Model(), processor))
        >>> _ = metric.update(torch.ones(3, 2, 2), "a photo")
        >>> metric.update("a photo", "an image").compute()
        tensor(81.4914)
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    traceable_update = False  # inputs are read in Python, the model runs outside the graph
    plot_lower_bound = 0.0
    plot_upper_bound = 100.0
    option_names = ()
    if TYPE_CHECKING:  # declared states, read as attributes
        score: Tensor
        n_samples: Tensor

    def __init__(self, model_name_or_path: Any = "openai/clip-vit-large-patch14", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        model, processor = resolve_clip(model_name_or_path, "CLIPScore")
        self._holder = ModelHolder(model, processor)
        self.add_state("score", torch.tensor(0.0, dtype=torch.float64), reduce="sum")
        self.add_state("n_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    @property
    def model(self) -> Any:
        """The CLIP model (not part of the metric's state or module tree)."""
        return self._holder.model

    @property
    def processor(self) -> Any:
        """The CLIP processor."""
        return self._holder.processor

    def update(
        self, source: Union[Tensor, List[Tensor], List[str], str], target: Union[Tensor, List[Tensor], List[str], str]
    ) -> None:
        scores, _ = pair_scores(source, target, self.model, self.processor)
        self.score = self.score + scores.sum().to(self.score.device)
        self.n_samples = self.n_samples + scores.numel()

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "n_samples")

    def compute(self) -> Tensor:
        return self.in_result_dtype((self.score / self.n_samples).clamp(min=0))
