"""A tiny randomly initialised CLIP (text and vision towers of one layer, hidden size 32, 30x30
images) and its processor (a byte-level BPE tokenizer with a handful of merges), saved to a local
folder, so that torchmetrics and torchtally use the same model without any download.

``tm_pair(folder)`` gives torchmetrics' callable form of the same model: transformers 5's
``get_*_features`` return model outputs, which torchmetrics 1.9 cannot read, so the model is
wrapped to return the projected features as a tensor (what transformers 4 returned)."""

import json
import os
from typing import Any, List, Tuple

import torch

MERGES = [("p", "h"), ("ph", "o"), ("pho", "t"), ("phot", "o</w>"), ("o", "o"), ("g", "oo"), ("goo", "d</w>")]
IMAGE_SIZE = 30


def _byte_chars() -> List[str]:
    """GPT-2's printable stand-ins for the 256 bytes (the byte-level BPE alphabet)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    codes, extra = list(printable), 0
    for b in range(256):
        if b not in printable:
            codes.append(256 + extra)
            extra += 1
    return [chr(c) for c in codes]


def save_tiny_clip(folder: str, seed: int = 0, max_positions: int = 24) -> str:
    """Write the tiny CLIPModel and its CLIPProcessor to ``folder``; returns it."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer
    from transformers.utils import logging

    logging.set_verbosity_error()
    os.makedirs(folder, exist_ok=True)
    chars = _byte_chars()
    vocab = [*chars, *(c + "</w>" for c in chars), *("".join(m) for m in MERGES), "<|startoftext|>", "<|endoftext|>"]
    with open(os.path.join(folder, "vocab.json"), "w") as f:
        json.dump({token: i for i, token in enumerate(vocab)}, f)
    with open(os.path.join(folder, "merges.txt"), "w") as f:
        f.write("#version: 0.2\n" + "\n".join(" ".join(m) for m in MERGES) + "\n")
    tokenizer = CLIPTokenizer(os.path.join(folder, "vocab.json"), os.path.join(folder, "merges.txt"))
    images = CLIPImageProcessor(
        size={"shortest_edge": IMAGE_SIZE}, crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}
    )
    torch.manual_seed(seed)
    n = len(vocab)
    config = CLIPConfig(
        text_config={
            "vocab_size": n,
            "hidden_size": 32,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "intermediate_size": 37,
            "max_position_embeddings": max_positions,
            "bos_token_id": n - 2,
            "eos_token_id": n - 1,
            "pad_token_id": n - 1,
        },
        vision_config={
            "hidden_size": 32,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "intermediate_size": 37,
            "image_size": IMAGE_SIZE,
            "patch_size": 10,
        },
        projection_dim=16,
    )
    CLIPModel(config).save_pretrained(folder)
    CLIPProcessor(image_processor=images, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def load_tiny_clip(folder: str) -> Tuple[Any, Any]:
    """The saved model (eval mode) and processor."""
    from transformers import CLIPModel, CLIPProcessor

    return CLIPModel.from_pretrained(folder, local_files_only=True).eval(), CLIPProcessor.from_pretrained(folder)


class TensorFeatures(torch.nn.Module):
    """A CLIP model whose ``get_*_features`` return the projected features as a tensor."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.clip = model
        self.config = model.config

    @staticmethod
    def _tensor(out: Any) -> torch.Tensor:
        return out if isinstance(out, torch.Tensor) else out.pooler_output

    def get_image_features(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        return self._tensor(self.clip.get_image_features(*args, **kwargs))

    def get_text_features(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        return self._tensor(self.clip.get_text_features(*args, **kwargs))


def tm_pair(folder: str) -> Any:
    """torchmetrics' ``model_name_or_path`` callable for the saved model."""

    def make() -> Tuple[Any, Any]:
        model, processor = load_tiny_clip(folder)
        return TensorFeatures(model), processor

    return make


def images(seed: int, n: int) -> torch.Tensor:
    """n random uint8-valued images [n, 3, 32, 36] (as float), which the processor resizes and crops."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (n, 3, 32, 36), generator=g).float()


CAPTIONS = [
    "a good photo",
    "a photo of a cat",
    "the dog sat on the mat",
    "good",
    "photo photo photo",
    "an image of a red house",
    "blue sky",
    "a cat and a dog",
]
