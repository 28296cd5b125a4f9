"""torchmetrics.wrappers' place: ``from torchtally.wrappers import BootStrapper``. A wrapper's
wrapped metrics keep their state in the wrapper (wrappers/abstract.py), so it syncs as one
metric."""

from .bootstrapping import BootStrapper
from .classwise import ClasswiseWrapper
from .feature_share import FeatureShare
from .minmax import MinMaxMetric
from .multioutput import MultioutputWrapper
from .multitask import MultitaskWrapper
from .running import Running
from .tracker import MetricTracker
from .transformations import BinaryTargetTransformer, LambdaInputTransformer, MetricInputTransformer

__all__ = [
    "BinaryTargetTransformer",
    "BootStrapper",
    "ClasswiseWrapper",
    "FeatureShare",
    "LambdaInputTransformer",
    "MetricInputTransformer",
    "MetricTracker",
    "MinMaxMetric",
    "MultioutputWrapper",
    "MultitaskWrapper",
    "Running",
]
