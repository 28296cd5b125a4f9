"""Lightning Fabric adapter: exact synced metrics in a ``fabric.launch``'d loop.

``fabric.setup_dataloaders`` gives each loader a DistributedSampler (drop_last=False) that pads
the last round with duplicates, as the Lightning Trainer does; its ``_FabricDataLoader`` keeps the
original loader's attributes, so the same padding removal as the Trainer's adapter
(:class:`~torchtally.adapters.lightning.MetricCallback`, both through MetricHook) finds the
sampler and drops the duplicates. A loader set up with ``use_distributed_sampler=False`` has no
DistributedSampler: the hook warns under torch.distributed, as it does for any loader.

Checkpoints: put the hook, not the metrics, in the state given to ``fabric.save`` /
``fabric.load``. Fabric asks every process for ``state_dict()`` but writes rank 0's only, and
loads that one dict on every process: a metric or collection put there directly would come
back with rank 0's state on every rank (the synced result would count rank 0's shard once per
rank), and a non-``persistent`` one saves nothing. The hook's ``state_dict`` is MetricHook's
resumable form: one record of every rank's state (gathered at save: every rank calls
``fabric.save``), plain bytes that ``fabric.load``'s ``weights_only`` loading reads. It loads on
any number of processes: rank 0 takes the saved total, the others start empty, and the next
sync gives every rank the values of one process.
"""

from __future__ import annotations

from typing import Any, Optional, Union

import torch

from .hook import MetricHook

__all__ = ["FabricMetricHook"]


class FabricMetricHook(MetricHook):
    """A :class:`~torchtally.adapters.hook.MetricHook` for Fabric loops, whose checkpoint
    resumes at any number of processes (see the module docstring).

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
        # later, on any number of processes: fabric.load("ckpt.pt", {"model": model, "metrics": hook})
    """

    def __init__(self, metrics: Any, output_transform: Any = None, *, fabric: Any = None, **kwargs: Any) -> None:
        device: Optional[Union[str, torch.device]] = kwargs.pop("device", None)
        if device is None and fabric is not None:
            device = fabric.device
        super().__init__(metrics, output_transform, device=device, **kwargs)
