"""Valid batches per kind of input, for the bad-input sweep over every family
(tests/catalogue/test_bad_input_sweep.py, table in support.sweep_catalogue).

``make_batch(kind, n, seed)`` gives the positional update arguments of ``n`` samples: tensors,
lists of strings, lists of dicts of tensors, dicts. The kinds are the shapes of input the
classes share (one maker per kind, not per class); a kind named after a classification family
(binary, multiclass, regression...) borrows support.metric_catalogue's makers, which the
wrapper entries use around those metrics.
"""

import random
from typing import Any, Callable, Dict, Tuple

import torch
import torch.nn.functional as F
from torch import nn

from support.audio_models import speech
from support.metric_catalogue import Entry
from support.tiny_clip import CAPTIONS, images

WORDS = "hello there general kenobi the cat sat on mat a dog is here he read book".split()


def _sentences(rng: random.Random, n: int) -> list:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6))) for _ in range(n)]


def _boxes(g: torch.Generator, k: int) -> torch.Tensor:
    xy = torch.rand(k, 2, generator=g) * 50
    return torch.cat((xy, xy + 1 + torch.rand(k, 2, generator=g) * 20), 1)


def _detections(g: torch.Generator, n: int) -> Tuple[list, list]:
    """n images, each with 2 predicted boxes (scores, labels 0-1) and 2 target boxes."""
    preds, target = [], []
    for _ in range(n):
        boxes = _boxes(g, 2)
        preds.append({"boxes": boxes + 1, "scores": torch.rand(2, generator=g), "labels": torch.tensor([0, 1])})
        target.append({"boxes": boxes, "labels": torch.tensor([0, 1])})
    return preds, target


def _pansharpening(g: torch.Generator, n: int) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
    pan = torch.rand(n, 3, 32, 32, generator=g)
    preds = pan + 0.2 * torch.rand(n, 3, 32, 32, generator=g)
    ms = F.avg_pool2d(preds, 2) + 0.05 * torch.rand(n, 3, 16, 16, generator=g)
    return preds, {"ms": ms, "pan": pan}


def _speech(rng: random.Random, n: int, fs: int) -> torch.Tensor:
    """n utterances of one second at ``fs``."""
    return speech(rng.randint(0, 99), n, fs, fs) if n else torch.zeros(0, fs)


def _noisy(clean: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    return clean + 0.3 * torch.randn(clean.shape, generator=g)


def _image_pair(g: torch.Generator, n: int, size: int = 16) -> Tuple[torch.Tensor, torch.Tensor]:
    target = torch.rand(n, 3, size, size, generator=g)
    return (target + 0.1 * torch.rand(n, 3, size, size, generator=g)).clamp(0, 1), target


class _LatentGenerator(nn.Module):
    """Latents of 4 -> images [n, 3, 8, 8] in [0, 255]."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(3)
        self.layer = nn.Linear(4, 3 * 8 * 8)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return 255 * torch.sigmoid(self.layer(z)).reshape(-1, 3, 8, 8)

    def sample(self, num_samples: int) -> torch.Tensor:
        return torch.randn(num_samples, 4)


def _multitask(g: torch.Generator, n: int) -> Tuple[dict, dict]:
    preds = {"cls": torch.rand(n, generator=g), "reg": torch.randn(n, generator=g)}
    return preds, {"cls": torch.randint(0, 2, (n,), generator=g), "reg": torch.randn(n, generator=g)}


_MAKERS: Dict[str, Callable[[torch.Generator, random.Random, int], Tuple[Any, ...]]] = {
    "text_pair": lambda g, r, n: (_sentences(r, n), _sentences(r, n)),
    # one hypothesis, two references each
    "translation": lambda g, r, n: (_sentences(r, n), [_sentences(r, 2) for _ in range(n)]),
    "squad": lambda g, r, n: (
        [{"prediction_text": s, "id": str(i)} for i, s in enumerate(_sentences(r, n))],
        [{"answers": {"answer_start": [0], "text": [s]}, "id": str(i)} for i, s in enumerate(_sentences(r, n))],
    ),
    "token_logits": lambda g, r, n: (torch.randn(n, 4, 5, generator=g), torch.randint(0, 5, (n, 4), generator=g)),
    "boxes": lambda g, r, n: _detections(g, n),
    "image_pair": lambda g, r, n: _image_pair(g, n),
    "image_pair_large": lambda g, r, n: _image_pair(g, n, 32),
    "image_pair_48": lambda g, r, n: _image_pair(g, n, 48),  # VIF: at least 41 pixels a side
    "gray_pair": lambda g, r, n: tuple(x[:, :1] for x in _image_pair(g, n)),
    "images": lambda g, r, n: (torch.rand(n, 3, 16, 16, generator=g),),
    "images_real": lambda g, r, n: (torch.rand(n, 3, 16, 16, generator=g), bool(r.getrandbits(1))),
    "pansharpening": lambda g, r, n: _pansharpening(g, n),
    "waves": lambda g, r, n: (lambda t: (_noisy(t, g), t))(torch.randn(n, 64, generator=g)),
    "sources": lambda g, r, n: (lambda t: (_noisy(t, g), t))(torch.randn(n, 2, 64, generator=g)),
    "spectra": lambda g, r, n: (lambda t: (_noisy(t, g), t))(torch.randn(n, 5, 6, 2, generator=g)),
    "speech_pair": lambda g, r, n: (lambda t: (_noisy(t, g) * 0.3 + t, t))(_speech(r, n, 8000)),
    "speech": lambda g, r, n: (_speech(r, n, 8000),),
    "speech16k": lambda g, r, n: (_speech(r, n, 16000),),
    "cluster_labels": lambda g, r, n: (torch.randint(0, 3, (n,), generator=g), torch.randint(0, 3, (n,), generator=g)),
    "cluster_data": lambda g, r, n: (torch.randn(n, 2, generator=g), torch.arange(n) % 3),
    "nominal": lambda g, r, n: (torch.randint(0, 3, (n,), generator=g), torch.randint(0, 3, (n,), generator=g)),
    "ratings": lambda g, r, n: (
        torch.multinomial(torch.ones(3), 4, replacement=True, generator=g).bincount(minlength=3).repeat(n, 1)
        if n
        else torch.zeros(0, 3, dtype=torch.long),
    ),  # fmt: skip
    "point_clouds": lambda g, r, n: (torch.randn(n, 6, 3, generator=g), torch.randn(n, 6, 3, generator=g)),
    "meshes": lambda g, r, n: (torch.randn(n, 12, 3, generator=g), torch.randn(n, 12, 3, generator=g)),
    "clip_images": lambda g, r, n: (images(r.randint(0, 99), n),),
    "clip_score": lambda g, r, n: (images(r.randint(0, 99), n), [r.choice(CAPTIONS) for _ in range(n)]),
    "videos": lambda g, r, n: (torch.rand(n, 3, 3, 6, 5, generator=g), torch.rand(n, 3, 3, 6, 5, generator=g)),
    "multitask": lambda g, r, n: _multitask(g, n),
    "generator": lambda g, r, n: (_LatentGenerator(),),
}


def make_batch(kind: str, n: int = 4, seed: int = 0) -> Tuple[Any, ...]:
    """A valid batch of ``n`` samples of input ``kind`` (same seed, same batch)."""
    g, rng = torch.Generator().manual_seed(seed), random.Random(seed)
    if kind in _MAKERS:
        return _MAKERS[kind](g, rng, n)
    return Entry(kind, None, kind).batch(n, generator=g)  # a classification / regression family


def kinds() -> Tuple[str, ...]:
    return tuple(_MAKERS)
