"""FeatureShare over torchtally's generative metrics, torchmetrics' documented usage:
``FeatureShare([FrechetInceptionDistance(feature=net), KernelInceptionDistance(feature=net, ...)])``.
The metrics name their extractor's attribute (``feature_network = "inception"``, torchmetrics'
name); the network runs once per batch for all of them, and the values equal the unshared
metrics'."""

import copy

import torch

from torchtally.image import FrechetInceptionDistance, InceptionScore, KernelInceptionDistance
from torchtally.image.mifid import MemorizationInformedFrechetInceptionDistance
from torchtally.wrappers import FeatureShare


class CountingNet(torch.nn.Module):
    """A tiny extractor [N, 3, 4, 4] uint8 -> [N, 8] that counts its calls."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(3 * 4 * 4, 8)
        self.num_features = 8
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return self.lin(x.float().flatten(1) / 255)


def _batches():
    g = torch.Generator().manual_seed(1)
    return [torch.randint(0, 256, (10, 3, 4, 4), dtype=torch.uint8, generator=g) for _ in range(4)]


def _metrics(net):
    return {
        "fid": FrechetInceptionDistance(feature=net),
        "kid": KernelInceptionDistance(feature=net, subset_size=5, subsets=3),
        "mifid": MemorizationInformedFrechetInceptionDistance(feature=net),
    }


def test_fid_kid_mifid_share_one_network_and_equal_the_unshared_metrics():
    torch.manual_seed(0)
    net = CountingNet()
    alone_net = copy.deepcopy(net)
    shared = FeatureShare(_metrics(net))
    alone = _metrics(alone_net)
    for i, x in enumerate(_batches()):
        real = i % 2 == 0
        shared.update(x, real=real)
        for m in alone.values():
            m.update(x, real=real)
    assert net.calls == 4  # once per batch
    assert alone_net.calls == 4 * len(alone)
    torch.manual_seed(5)  # KID draws its subsets from torch's generator
    got = shared.compute()
    torch.manual_seed(5)
    want = {name: m.compute() for name, m in alone.items()}
    assert set(got) == set(want)
    for name in want:
        torch.testing.assert_close(got[name], want[name], rtol=0, atol=0)


def test_inception_score_shares_too():
    torch.manual_seed(0)
    net = CountingNet()
    shared = FeatureShare([InceptionScore(feature=net, splits=2)])
    alone = InceptionScore(feature=copy.deepcopy(net), splits=2)
    for x in _batches():
        shared.update(x)
        alone.update(x)
    torch.manual_seed(3)
    got = shared.compute()["InceptionScore"]
    torch.manual_seed(3)
    torch.testing.assert_close(got, alone.compute(), rtol=0, atol=0)


def test_every_generative_metric_names_its_network_as_torchmetrics():
    for cls in (
        FrechetInceptionDistance,
        KernelInceptionDistance,
        InceptionScore,
        MemorizationInformedFrechetInceptionDistance,
    ):
        assert cls.feature_network == "inception"
