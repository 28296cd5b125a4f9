"""For the generative-image metrics' tests (FID, KID, IS, MiFID): small feature extractors,
seeded KID/IS and a rank worker, picklable and importable without torchmetrics, so that the
spawned ranks start fast."""

import torch
from torch import nn

from torchtally.image import FrechetInceptionDistance, InceptionScore, KernelInceptionDistance
from torchtally.testing import count_collectives


class Net(nn.Module):
    """conv + pool + linear to ``d`` features, randomly initialised from ``seed``."""

    def __init__(self, d: int = 16, seed: int = 0) -> None:
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            self.conv = nn.Conv2d(3, 4, 3, stride=2)
            self.fc = nn.Linear(16, d)
        self.pool = nn.AdaptiveAvgPool2d(2)

    def forward(self, x):
        x = x.float() / 255 if x.dtype == torch.uint8 else x.float()
        return self.fc(self.pool(torch.relu(self.conv(x))).flatten(1))


class Identity(nn.Module):
    """Features given directly as the "images" [N, D]."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.num_features = d

    def forward(self, x):
        return x


class SeededKID(KernelInceptionDistance):
    """compute() after torch.manual_seed(0): the same subsets in every process (the tester)."""

    def compute(self):
        torch.manual_seed(0)
        return super().compute()


class SeededIS(InceptionScore):
    def compute(self):
        torch.manual_seed(0)
        return super().compute()


def fid_rank_worker(rank, world_size, batches):
    """A float64 FID over ``batches[rank::world_size]`` of [N, D] features: (collectives by
    name, result)."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        m = FrechetInceptionDistance(feature=Identity(batches[0][0].shape[1]))
    finally:
        torch.set_default_dtype(previous)
    for x, real in batches[rank::world_size]:
        m.update(x, real)
    with count_collectives() as counter:
        result = m.compute()
    return dict(counter.by_name), result
