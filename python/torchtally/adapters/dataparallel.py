"""Where metric state lives when the model is wrapped in ``torch.nn.DataParallel``.

DataParallel runs one process: it scatters each batch over ``device_ids``, runs a replica of
the module on each, and gathers the outputs on ``output_device`` (``device_ids[0]`` unless
given). Replicas are rebuilt on every forward, so state written inside the wrapped module is
lost; metric state therefore stays outside the model, on the output device, and targets are
moved there before each update. There is nothing to sync: one process sees every sample.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Union

import torch
from torch import nn

__all__ = ["is_metric_like", "metric_device", "check_no_metrics_inside"]


def is_metric_like(obj: Any) -> bool:
    """True for anything with callable ``reset``, ``update`` and ``compute`` (a torchtally,
    torchmetrics or torcheval metric, or a collection of them)."""
    return all(callable(getattr(obj, name, None)) for name in ("reset", "update", "compute"))


def _first_param_device(module: nn.Module) -> torch.device:
    for tensor in module.parameters():
        return tensor.device
    for buffer in module.buffers():
        return buffer.device
    return torch.device("cpu")


def _gather_device(
    device_ids: list, output_device: Optional[Union[int, torch.device]], device_type: str
) -> torch.device:
    """DataParallel's gather target: ``output_device`` if set, else ``device_ids[0]``."""
    target = device_ids[0] if output_device is None else output_device
    if isinstance(target, torch.device):
        return target
    return torch.device(device_type, int(target))


def metric_device(model: nn.Module) -> torch.device:
    """The device where a model's outputs arrive, hence where metric state should live.

    DataParallel: its output device (``device_ids[0]`` by default); with no accelerator it
    wraps nothing and the module's own device is used. DistributedDataParallel:
    ``device_ids[0]`` when set. Any other module: the device of its first parameter (CPU if
    it has none).

    >>> metric_device(nn.DataParallel(nn.Linear(2, 2)))   # CPU-only torch: nothing to scatter
    device(type='cpu')
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    if isinstance(model, nn.DataParallel):
        if not model.device_ids:
            return _first_param_device(model.module)
        return _gather_device(list(model.device_ids), model.output_device, model.src_device_obj.type)
    if isinstance(model, nn.parallel.DistributedDataParallel):
        if model.device_ids:
            return _gather_device(list(model.device_ids), None, _first_param_device(model.module).type)
        return _first_param_device(model.module)
    return _first_param_device(model)


def _metric_paths(model: nn.Module) -> Iterable[str]:
    for module_name, module in model.named_modules():
        if module_name and is_metric_like(module):
            yield module_name
        for attr, value in vars(module).items():
            if not isinstance(value, nn.Module) and is_metric_like(value):
                yield f"{module_name}.{attr}" if module_name else attr


def check_no_metrics_inside(model: nn.Module) -> None:
    """Raise ValueError if a DataParallel model holds a metric (as a submodule or attribute).

    Each forward runs on fresh replicas of the module, so updates made inside it are
    discarded; keep metrics outside the model and pass the model's outputs to them.
    """
    if not isinstance(model, nn.DataParallel):
        return
    paths = sorted(set(_metric_paths(model.module)))
    if paths:
        raise ValueError(
            f"model: DataParallel wraps a module that holds metric(s) at {', '.join(paths)}; "
            "DataParallel replicates the module on every forward and drops state written in "
            "the replicas. Keep metrics outside the model and update them from its outputs."
        )
