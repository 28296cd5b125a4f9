"""The constructor arguments a metric page's state is introspected with, for the classes that
need an object to be made: a wrapper's metric, a model's stand-in, a required setting.

A stand-in is the smallest object the class accepts: the state's names, reduce ops and dtypes
do not depend on it, only the feature width does (say so on the page: ``note``). Classes whose
model cannot be replaced by a small module here (a Hugging Face checkpoint, an ONNX file) are
left out; their page lists the state as ``add_state`` declares it (docs/declared_state.py).
"""

from typing import Any, Callable, Dict, Tuple

import torch
from torch import nn

FEATURES = 8  # the stand-in feature extractor's width (the real network's is 2048 for FID)


class TinyFeatures(nn.Module):
    """Images [N, 3, H, W] (uint8 or float) to FEATURES features: conv, pool, linear."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2)
        self.pool = nn.AdaptiveAvgPool2d(2)
        self.fc = nn.Linear(16, FEATURES)
        self.num_features = FEATURES

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.float() / 255 if x.dtype == torch.uint8 else x.float()
        return self.fc(self.pool(torch.relu(self.conv(x))).flatten(1))


class MeanSquare(nn.Module):
    """A distance between two image batches: the mean squared difference per pair."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return ((a - b) ** 2).flatten(1).mean(1)


class Scores(nn.Module):
    """A speech-quality network's stand-in: returns what it is given (never called here)."""

    def forward(self, x: torch.Tensor, *rest: Any) -> torch.Tensor:
        return x


# NISQA's mel-spectrogram settings (the keys of its ``args``), small values
_NISQA_ARGS = {
    "ms_n_fft": 512,
    "ms_hop_length": 0.01,
    "ms_win_length": 0.02,
    "ms_n_mels": 16,
    "ms_fmax": 8000,
    "ms_seg_length": 15,
    "ms_seg_hop_length": 4,
    "ms_max_segments": 40,
}


def _frame_scores(ref: torch.Tensor, dist: torch.Tensor) -> torch.Tensor:
    """A VMAF model's stand-in: one score per frame."""
    return (ref - dist).abs().mean((1, 2, 3))


def _no_tokens(sentences: Any, max_length: int) -> Any:
    """A tokenizer's stand-in (never called here)."""
    return None


def _no_embeddings(model: Any, batch: Any) -> Any:
    """A forward function's stand-in (never called here)."""
    return None


def _mse() -> Any:
    from torchtally.regression import MeanSquaredError

    return MeanSquaredError()


def _binary_accuracy() -> Any:
    from torchtally.classification import BinaryAccuracy

    return BinaryAccuracy()


def _per_class_accuracy() -> Any:
    from torchtally.classification import MulticlassAccuracy

    return MulticlassAccuracy(num_classes=3, average=None)


def _si_snr() -> Any:
    from torchtally.functional import scale_invariant_signal_noise_ratio

    return scale_invariant_signal_noise_ratio


def _feature_metrics() -> Any:
    from torchtally.image import FrechetInceptionDistance, KernelInceptionDistance

    return [FrechetInceptionDistance(feature=TinyFeatures()), KernelInceptionDistance(feature=TinyFeatures())]


def _sum_metric() -> Any:
    from torchtally.aggregation import SumMetric

    return SumMetric()


_TINY = f"an {FEATURES}-feature stand-in network (the state's width follows the network's features)"

# class name -> (maker of its keyword arguments, what the page says they are)
STAND_INS: Dict[str, Tuple[Callable[[], Dict[str, Any]], str]] = {
    "FrechetInceptionDistance": (lambda: {"feature": TinyFeatures()}, _TINY),
    "KernelInceptionDistance": (lambda: {"feature": TinyFeatures()}, _TINY),
    "MemorizationInformedFrechetInceptionDistance": (lambda: {"feature": TinyFeatures()}, _TINY),
    "InceptionScore": (lambda: {"feature": TinyFeatures()}, _TINY),
    "PerceptualPathLength": (lambda: {"sim_net": MeanSquare()}, "sim_net: a small stand-in distance"),
    "PeakSignalNoiseRatio": (lambda: {"data_range": 1.0}, "data_range=1.0"),
    "PeakSignalNoiseRatioWithBlockedEffect": (lambda: {"data_range": 1.0}, "data_range=1.0"),
    "PanopticQuality": (lambda: {"things": {0, 1}, "stuffs": {2}}, "things={0, 1}, stuffs={2}"),
    "ModifiedPanopticQuality": (lambda: {"things": {0, 1}, "stuffs": {2}}, "things={0, 1}, stuffs={2}"),
    "LipVertexError": (lambda: {"mouth_map": [0, 1, 2]}, "mouth_map=[0, 1, 2]"),
    "PermutationInvariantTraining": (
        lambda: {"metric_func": _si_snr()},
        "metric_func=scale_invariant_signal_noise_ratio",
    ),
    "PerceptualEvaluationSpeechQuality": (lambda: {"fs": 16000, "mode": "wb"}, 'fs=16000, mode="wb"'),
    "ShortTimeObjectiveIntelligibility": (lambda: {"fs": 16000}, "fs=16000"),
    "SpeechReverberationModulationEnergyRatio": (lambda: {"fs": 16000}, "fs=16000"),
    "NonIntrusiveSpeechQualityAssessment": (
        lambda: {"fs": 16000, "model": Scores(), "args": dict(_NISQA_ARGS)},
        "fs=16000, a stand-in network and small mel settings",
    ),
    "DeepNoiseSuppressionMeanOpinionScore": (
        lambda: {"fs": 16000, "personalized": False, "p808_model": Scores(), "sig_bak_ovr_model": Scores()},
        "fs=16000, personalized=False, stand-in networks",
    ),
    "VideoMultiMethodAssessmentFusion": (lambda: {"model": _frame_scores}, "a stand-in model: one score per frame"),
    "BERTScore": (
        lambda: {"model": nn.Linear(2, 2), "user_tokenizer": _no_tokens, "user_forward_fn": _no_embeddings},
        "a stand-in model and tokenizer",
    ),
    "BaseAggregator": (lambda: {"fn": "sum", "default_value": torch.tensor(0.0)}, 'fn="sum", default_value=0.0'),
    "BinaryTargetTransformer": (lambda: {"wrapped_metric": _binary_accuracy()}, "wrapping BinaryAccuracy()"),
    "BootStrapper": (
        lambda: {"base_metric": _mse(), "num_bootstraps": 2},
        "wrapping MeanSquaredError(), num_bootstraps=2 (one copy of the state per bootstrap)",
    ),
    "ClasswiseWrapper": (
        lambda: {"metric": _per_class_accuracy()},
        "wrapping MulticlassAccuracy(num_classes=3, average=None)",
    ),
    "LambdaInputTransformer": (lambda: {"wrapped_metric": _mse()}, "wrapping MeanSquaredError()"),
    "MetricInputTransformer": (lambda: {"wrapped_metric": _mse()}, "wrapping MeanSquaredError()"),
    "MetricTracker": (lambda: {"metric": _mse()}, "tracking MeanSquaredError(): one copy of its state per step"),
    "MinMaxMetric": (lambda: {"base_metric": _mse()}, "wrapping MeanSquaredError()"),
    "MultioutputWrapper": (
        lambda: {"base_metric": _mse(), "num_outputs": 2},
        "wrapping MeanSquaredError(), num_outputs=2 (one copy of the state per output)",
    ),
    "MultitaskWrapper": (lambda: {"task_metrics": {"a": _mse()}}, 'task_metrics={"a": MeanSquaredError()}'),
    "Running": (
        lambda: {"base_metric": _sum_metric(), "window": 3},
        "wrapping SumMetric(), window=3 (one copy of the state per window slot)",
    ),
    "FeatureShare": (
        lambda: {"metrics": _feature_metrics()},
        f"sharing {_TINY} between FrechetInceptionDistance and KernelInceptionDistance",
    ),
}
