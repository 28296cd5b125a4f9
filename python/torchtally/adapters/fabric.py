"""Lightning Fabric adapter: exact synced metrics in a ``fabric.launch``'d loop.

``fabric.setup_dataloaders`` gives each loader a DistributedSampler (drop_last=False) that pads
the last round with duplicates, as the Lightning Trainer does; its ``_FabricDataLoader`` keeps the
original loader's attributes, so the same padding removal as the Trainer's adapter
(:class:`~torchtally.adapters.lightning.MetricCallback`, both through MetricHook) finds the
sampler and drops the duplicates. A loader set up with ``use_distributed_sampler=False`` has no
DistributedSampler: the hook warns under torch.distributed, as it does for any loader.

Checkpoints: put the hook (not the metrics) in the state given to ``fabric.save`` /
``fabric.load``; its ``state_dict`` keeps every rank's states (torchtally.adapters.checkpoint),
for a resume with the same number of processes. A metric or collection put there directly is
saved by rank 0 only and would come back with rank 0's state on every rank.
"""

from __future__ import annotations

from typing import Any, Optional, Union

import torch

from .checkpoint import CheckpointedMetricHook

__all__ = ["FabricMetricHook"]


class FabricMetricHook(CheckpointedMetricHook):
    """A :class:`~torchtally.adapters.hook.MetricHook` for Fabric loops, checkpointed rank-wise.

    Takes MetricHook's arguments, plus ``fabric`` (optional): metric state and inputs go to
    ``fabric.device``. Give :meth:`epoch` the loader ``fabric.setup_dataloaders`` returned.

    Example (in the function ``fabric.launch`` runs)::

        fabric = Fabric(accelerator="cuda", devices=4, strategy="ddp")
        fabric.launch()
        model = fabric.setup(model)
        val_loader = fabric.setup_dataloaders(val_loader)
        hook = FabricMetricHook({"acc": MulticlassAccuracy(num_classes=10)}, fabric=fabric)
        with hook.epoch(val_loader):
            for x, y in val_loader:
                hook.update(model(x), y)
        fabric.print(hook.result)            # one process's values over the whole val set
        fabric.save("ckpt.pt", {"model": model, "metrics": hook})
    """

    def __init__(self, metrics: Any, output_transform: Any = None, *, fabric: Any = None, **kwargs: Any) -> None:
        device: Optional[Union[str, torch.device]] = kwargs.pop("device", None)
        if device is None and fabric is not None:
            device = fabric.device
        super().__init__(metrics, output_transform, device=device, **kwargs)
