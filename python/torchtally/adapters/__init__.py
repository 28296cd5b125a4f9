"""The engine layer: when to reset, update and sync, and which rows of a batch to drop. By
file::

  hook.py          MetricHook, for any loop: epoch started -> reset, iteration -> update without
                   a DistributedSampler's padding, epoch completed -> sync and compute
  sampler.py       where a DistributedSampler put each sample, and which positions are padding
  dataparallel.py  DataParallel placement: metric state on the output device, never inside the model
  ignite.py        pytorch-ignite: ``attach(metric, engine, name, usage=...)``
  lightning.py     Lightning: ``MetricCallback``
  accelerate.py    HF Accelerate: ``AccelerateMetricHook``, without the samples even_batches repeats
  fabric.py        Lightning Fabric: ``FabricMetricHook``, without its DistributedSampler padding
                   (both hooks' checkpoints through save_state / fabric.save resume at any world size)
  avalanche/       Avalanche: plugin metrics for its ``EvaluationPlugin``

Each engine's module imports its engine: import the submodule you need.
"""
