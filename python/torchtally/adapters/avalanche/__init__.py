"""Avalanche adapter: exact, synced torchtally metrics for continual-learning strategies.

Avalanche's own metrics (``accuracy_metrics``, ``loss_metrics``) are not synced across DDP
ranks: each rank reports its own shard, padding duplicates included. This module gives plugin
metrics for Avalanche's ``EvaluationPlugin`` that accumulate locally on every rank, drop the
padding of Avalanche's distributed loaders row by row, and sync once when their level ends::

    from torchtally.adapters.avalanche import accuracy_metrics, loss_metrics  # the one-line swap

    evaluator = EvaluationPlugin(
        accuracy_metrics(minibatch=True, epoch=True, experience=True, stream=True),
        loss_metrics(epoch=True, experience=True, stream=True),
        loggers=[InteractiveLogger()],
    )

Any torchtally metric or collection goes in through :class:`TallyPluginMetric`::

    TallyPluginMetric(MulticlassF1Score(num_classes=10, average="macro"), "F1_Exp", level="experience")

Avalanche is imported here, not by torchtally itself: install it beside torchtally with
``pip install avalanche-lib==0.6.0`` (it needs torchvision built for your torch).
"""

import importlib

try:
    importlib.import_module("avalanche.evaluation")
except ImportError as error:  # pragma: no cover - exercised in the main test environment
    raise ImportError(
        "torchtally.adapters.avalanche needs Avalanche: pip install avalanche-lib==0.6.0 "
        "(with a torchvision built for your torch; see README, 'Avalanche', or `make "
        "avalanche-venv`). torchtally itself does not depend on it."
    ) from error

from .metrics import AccuracyPlugin, LossPlugin, accuracy_metrics, loss_metrics  # noqa: E402
from .plugin import LEVELS, TallyPluginMetric  # noqa: E402

__all__ = ["TallyPluginMetric", "AccuracyPlugin", "LossPlugin", "accuracy_metrics", "loss_metrics", "LEVELS"]
