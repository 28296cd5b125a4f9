"""Small metrics written only for the tests of Metric, MetricCollection and sync: one per kind
of state (sum, max/min/prod, cat, merge), plus data to feed them.

All share ``update(labels, scores, rows)``: labels int64 [B] in [0, C), scores float64 [B, D],
rows float32 [B, 3]. tests/distributed imports this module too (its conftest puts tests/ on
sys.path), as ``support.toy_metrics``.
"""

from typing import List, Tuple

import torch

from torchtally import Metric

C = 4  # classes
D = 2  # score columns


def make_data(n: int, seed: int = 0) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, C, (n,), generator=g)
    # Means far from 0 and a wide spread make naive moment formulas lose digits; Chan does not.
    scores = torch.randn(n, D, generator=g, dtype=torch.float64) * torch.tensor([3.0, 0.01], dtype=torch.float64)
    scores = scores + torch.tensor([1e3, -5.0], dtype=torch.float64)
    rows = torch.randn(n, 3, generator=g)
    return labels, scores, rows


def batches(data, start: int, stop: int, batch_size: int = 7):
    """Batches of data[start:stop]; none at all when the range is empty."""
    labels, scores, rows = data
    for i in range(start, stop, batch_size):
        j = min(i + batch_size, stop)
        yield labels[i:j], scores[i:j], rows[i:j]


class SumMetric(Metric):
    """Per-class counts (int64 sum) and per-column score sums (float64 sum)."""

    calls = 0  # raw update calls, counted across instances (state sharing tests)

    def __init__(self, num_classes: int = C, shared: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.add_state("counts", torch.zeros(num_classes, dtype=torch.int64), reduce="sum")
        self.add_state("total", torch.zeros(D, dtype=torch.float64), reduce="sum")
        if shared:
            self.state_key = ("toy_sums", num_classes)

    def update(self, labels, scores, rows):
        if labels.dim() != 1 or labels.shape[0] != scores.shape[0]:
            raise ValueError(f"labels: expected shape ({scores.shape[0]},), got {tuple(labels.shape)}")
        if labels.numel() and (labels.min() < 0 or labels.max() >= self.counts.shape[0]):
            raise ValueError(f"labels: expected values in [0, {self.counts.shape[0]})")
        type(self).calls += 1
        self.counts = self.counts + torch.bincount(labels, minlength=self.counts.shape[0])
        self.total = self.total + scores.sum(dim=0)

    def compute(self):
        return self.counts.clone(), self.total.clone()


class MeanScore(SumMetric):
    """Shares SumMetric's state (same state_key when shared=True) but computes something else."""

    def compute(self):
        return self.total / self.counts.sum()


class ExtremesMetric(Metric):
    """Largest score per column (float64 max), smallest label (int64 min), a product (float64 prod)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("largest", torch.full((D,), float("-inf"), dtype=torch.float64), reduce="max")
        self.add_state("smallest_label", torch.tensor(C, dtype=torch.int64), reduce="min")
        self.add_state("growth", torch.tensor(1.0, dtype=torch.float64), reduce="prod")

    def update(self, labels, scores, rows):
        if labels.numel() == 0:
            return
        self.largest = torch.maximum(self.largest, scores.max(dim=0).values)
        self.smallest_label = torch.minimum(self.smallest_label, labels.min())
        self.growth = self.growth * torch.prod(1.0 + 1e-3 * scores[:, 1])

    def compute(self):
        return self.largest.clone(), self.smallest_label.clone(), self.growth.clone()


class CatMetric(Metric):
    """Every row and label seen, concatenated (cat states, two dtypes)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("rows", torch.empty(0, 3), reduce="cat")
        self.add_state("labels", torch.empty(0, dtype=torch.int64), reduce="cat")

    def update(self, labels, scores, rows):
        self.append_state("rows", rows)
        self.append_state("labels", labels)

    def compute(self):
        return self.rows.clone(), self.labels.clone()


def chan_merge(parts: List[torch.Tensor]) -> torch.Tensor:
    """Merge [D, 3] (n, mean, M2) rows with Chan et al.'s pairwise formula."""
    out = parts[0].clone()
    for p in parts[1:]:
        n_a, mean_a, m2_a = out[:, 0], out[:, 1], out[:, 2]
        n_b, mean_b, m2_b = p[:, 0], p[:, 1], p[:, 2]
        n = n_a + n_b
        safe_n = torch.where(n > 0, n, torch.ones_like(n))
        delta = mean_b - mean_a
        mean = mean_a + delta * n_b / safe_n
        m2 = m2_a + m2_b + delta * delta * n_a * n_b / safe_n
        out = torch.stack([n, torch.where(n > 0, mean, mean_a), m2], dim=1)
    return out


class MomentsMetric(Metric):
    """Per-column (n, mean, M2) merged with Chan's formula: a "merge" state."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("moments", torch.zeros(D, 3, dtype=torch.float64), reduce="merge")

    def update(self, labels, scores, rows):
        n = scores.shape[0]
        if n == 0:
            return
        mean = scores.mean(dim=0)
        m2 = ((scores - mean) ** 2).sum(dim=0)
        batch = torch.stack([torch.full((D,), float(n), dtype=torch.float64), mean, m2], dim=1)
        self.moments = chan_merge([self.moments, batch])

    def merge_state_values(self, name, values):
        assert name == "moments"
        return chan_merge(values)

    def compute(self):
        n, mean, m2 = self.moments[:, 0], self.moments[:, 1], self.moments[:, 2]
        return mean.clone(), m2 / (n - 1)


class ConfusionAccuracy(Metric):
    """Accuracy from an int64 confusion matrix (one int64 sum state), as a classifier metric keeps it."""

    def __init__(self, num_classes: int = C, **kwargs):
        super().__init__(**kwargs)
        self.add_state("confmat", torch.zeros(num_classes, num_classes, dtype=torch.int64), reduce="sum")

    def update(self, labels, scores, rows):
        n = self.confmat.shape[0]
        pred = (labels + (scores[:, 1] > -5.0).long()) % n
        self.confmat = self.confmat + torch.bincount(labels * n + pred, minlength=n * n).reshape(n, n)

    def compute(self):
        return self.confmat.trace() / self.confmat.sum()


def mixed_metrics(prefix: str = "") -> dict:
    """One metric of each kind, named with ``prefix``."""
    return {
        f"{prefix}sum": SumMetric(),
        f"{prefix}ext": ExtremesMetric(),
        f"{prefix}cat": CatMetric(),
        f"{prefix}mom": MomentsMetric(),
    }
