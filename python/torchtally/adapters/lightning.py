"""Lightning adapter: a Callback that resets, updates, syncs and logs torchtally metrics.

Lightning's own idiom needs no adapter: ``self.log("val_acc", self.val_acc)`` and
``self.log_dict(collection)`` take torchtally's metrics and collections as they take
torchmetrics' (``on_step``: the last forward's batch value; ``on_epoch``: ``compute()``, synced
over every rank; reset after the epoch; torchtally.base.interop says how). Like torchmetrics,
that idiom counts the samples Lightning's DDP validation sampler repeats as padding.

The callback is exact there: it updates the metrics from every batch without the
DistributedSampler's padding, syncs their state once at epoch end on every rank, and logs the
exact values with ``sync_dist=False`` (they are already equal on every rank).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from typing import Any, Callable, List, Optional, Tuple, Union

import torch

try:
    from lightning.pytorch import Callback, LightningModule, Trainer
except ImportError:  # the standalone package
    from pytorch_lightning import Callback, LightningModule, Trainer  # type: ignore[assignment]  # the same API

from ..base.interop import register_with_torchmetrics
from .hook import MetricHook, as_update_args

register_with_torchmetrics()  # self.log(name, metric) for torchtally's metrics (torchtally.base.interop)

__all__ = ["MetricCallback"]

_STAGES = ("train", "validate", "test")


def _flatten_loaders(iterables: Any) -> List[Any]:
    if iterables is None:
        return []
    if isinstance(iterables, Mapping):
        return list(iterables.values())
    if isinstance(iterables, (list, tuple)):
        return list(iterables)
    return [iterables]


def _flatten(result: Mapping, parent: str = "") -> List[Tuple[str, Any]]:
    """{"acc": t, "pr": {"p": t1, "r": t2}} -> [("acc", t), ("pr_p", t1), ("pr_r", t2)]."""
    items: List[Tuple[str, Any]] = []
    for key, value in result.items():
        name = f"{parent}_{key}" if parent else str(key)
        if isinstance(value, Mapping):
            items += _flatten(value, name)
        else:
            items.append((name, value))
    return items


class MetricCallback(Callback):
    """Exact, synced metrics for a Lightning stage, logged without ``sync_dist``.

    Args:
        metrics: a metric, a MetricCollection, or a dict ``name -> metric``.
        output_transform: ``(outputs, batch) -> update arguments``, where ``outputs`` is what
            the step returned (e.g. ``(preds, target)``, or ``lambda out, batch: (out["logits"],
            batch[1])``). Default: ``outputs`` as is (a tuple, a dict, or ignite's
            ``{"y_pred", "y"}``).
        stage: ``"validate"`` (default; also the validation inside ``fit``), ``"test"`` or
            ``"train"``.
        prefix: prepended to the logged names (default ``"val_"``, ``"test_"``, ``"train_"``);
            a nested dict result is logged as ``prefix + "outer_inner"``.
        name: logged name of a non-dict result (default ``"metric"``).
        log: log the scalar results with ``pl_module.log`` (default True).
        log_kwargs: extra keyword arguments for ``pl_module.log`` (e.g. ``prog_bar=True``).

    The synced result is also kept in :attr:`result` after every epoch. Sanity-check runs
    are ignored. Several evaluation loaders accumulate into the same metrics.

    Example::

        callback = MetricCallback(
            {"acc": MulticlassAccuracy(num_classes=10)},
            output_transform=lambda out, batch: (out, batch[1]),   # validation_step returns logits
        )
        trainer = Trainer(strategy="ddp", devices=2, callbacks=[callback])
        trainer.fit(model, train_loader, val_loader)   # logs "val_acc", exact over the val set
    """

    def __init__(
        self,
        metrics: Any,
        output_transform: Optional[Callable[[Any, Any], Any]] = None,
        *,
        stage: str = "validate",
        prefix: Optional[str] = None,
        name: str = "metric",
        log: bool = True,
        log_kwargs: Optional[dict] = None,
        device: Optional[Union[str, torch.device]] = None,
    ) -> None:
        super().__init__()
        if stage not in _STAGES:
            raise ValueError(f"stage: expected one of {_STAGES}, got {stage!r}")
        if output_transform is not None and not callable(output_transform):
            raise TypeError(f"output_transform: expected a callable, got {type(output_transform).__name__}")
        self.hook = MetricHook(metrics, device=device)
        self.output_transform = output_transform
        self.stage = stage
        self.prefix = prefix if prefix is not None else {"validate": "val_", "test": "test_", "train": "train_"}[stage]
        self.name = name
        self.log_results = log
        self.log_kwargs = dict(log_kwargs or {})
        self._explicit_device = device is not None
        self._loader_idx: Optional[int] = None

    @property
    def result(self) -> Any:
        """The last synced result (a dict for a collection)."""
        return self.hook.result

    # ---- plumbing -----------------------------------------------------------------------

    def _loaders(self, trainer: Trainer) -> List[Any]:
        if self.stage == "train":
            return _flatten_loaders(trainer.train_dataloader)
        if self.stage == "test":
            return _flatten_loaders(trainer.test_dataloaders)
        # fit's validation and trainer.validate() keep separate loops; read the running one
        loop = trainer.validate_loop if trainer.state.fn == "validate" else trainer.fit_loop.epoch_loop.val_loop
        combined = getattr(loop, "_combined_loader", None)
        if combined is not None:
            return _flatten_loaders(combined.iterables)
        return _flatten_loaders(trainer.val_dataloaders)

    def _start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if trainer.sanity_checking:
            return
        if not self._explicit_device and callable(getattr(self.hook.metrics, "to", None)):
            self.hook.device = pl_module.device
            self.hook.metrics.to(pl_module.device)
        self.hook.start_epoch(None)
        self._loader_idx = None

    def _batch_end(self, trainer: Trainer, outputs: Any, batch: Any, dataloader_idx: int) -> None:
        if trainer.sanity_checking:
            return
        if dataloader_idx != self._loader_idx:
            loaders = self._loaders(trainer)
            loader = loaders[dataloader_idx] if dataloader_idx < len(loaders) else None
            self.hook.start_loader(loader)
            self._loader_idx = dataloader_idx
        if self.output_transform is not None:
            outputs = self.output_transform(outputs, batch)
        elif outputs is None:
            raise ValueError(
                f"outputs: the {self.stage} step returned None; return (preds, target) from it "
                "or pass output_transform=lambda outputs, batch: (preds, target)"
            )
        args, kwargs = as_update_args(outputs)
        with torch.no_grad():
            self.hook.update(*args, **kwargs)

    def _end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if trainer.sanity_checking:
            return
        result = self.hook.end_epoch()
        if not self.log_results:
            return
        items = _flatten(result) if isinstance(result, Mapping) else [(self.name, result)]
        for key, value in items:
            if isinstance(value, torch.Tensor) and value.numel() != 1:
                continue  # per-class vectors, curves: kept in .result, not loggable
            if not isinstance(value, (torch.Tensor, int, float)):
                continue
            if isinstance(value, torch.Tensor) and not value.is_floating_point():
                value = value.double()  # Lightning logs floats; float64 keeps counts exact
            self._silence_sync_dist_hint(f"{self.prefix}{key}")
            pl_module.log(
                f"{self.prefix}{key}", value, on_step=False, on_epoch=True, sync_dist=False, **self.log_kwargs
            )

    @staticmethod
    def _silence_sync_dist_hint(logged_name: str) -> None:
        # Lightning suggests sync_dist=True for every epoch-level value logged without it in a
        # distributed run; these values are already synced (and equal on every rank).
        warnings.filterwarnings(
            "ignore",
            message=rf"It is recommended to use `self\.log\({re.escape(repr(logged_name))}, \.\.\., sync_dist=True\)`",
        )

    # ---- Lightning hooks ----------------------------------------------------------------

    def on_validation_epoch_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if self.stage == "validate":
            self._start(trainer, pl_module)

    def on_validation_batch_end(
        self,
        trainer: Trainer,
        pl_module: LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int = 0,
    ) -> None:
        if self.stage == "validate":
            self._batch_end(trainer, outputs, batch, dataloader_idx)

    def on_validation_epoch_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if self.stage == "validate":
            self._end(trainer, pl_module)

    def on_test_epoch_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if self.stage == "test":
            self._start(trainer, pl_module)

    def on_test_batch_end(
        self,
        trainer: Trainer,
        pl_module: LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int = 0,
    ) -> None:
        if self.stage == "test":
            self._batch_end(trainer, outputs, batch, dataloader_idx)

    def on_test_epoch_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if self.stage == "test":
            self._end(trainer, pl_module)

    def on_train_epoch_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if self.stage == "train":
            self._start(trainer, pl_module)

    def on_train_batch_end(
        self, trainer: Trainer, pl_module: LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        if self.stage == "train":
            self._batch_end(trainer, outputs, batch, 0)

    def on_train_epoch_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if self.stage == "train":
            self._end(trainer, pl_module)
