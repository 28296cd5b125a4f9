"""Synced metrics through ignite's Engine and the plain loop equal scikit-learn over the whole
dataset, with a shuffling DistributedSampler that pads, on 2 and 3 gloo processes.

One spawned process group per world size runs every dataset size and batch size.
"""

import pytest
from support.engine_helpers import check_against_sklearn, dataset_sizes, make_dataset, make_metrics, per_sample_loss
from torch.utils.data import DataLoader, DistributedSampler

from torchtally import MeanMetric
from torchtally.testing import run_distributed

pytestmark = pytest.mark.distributed


# ---- the workers ----------------------------------------------------------------------------


def _ignite_and_plain_loop(rank, world_size):
    from ignite.engine import Engine, Events

    from torchtally.adapters.hook import MetricHook
    from torchtally.adapters.ignite import attach

    for n in dataset_sizes(world_size):
        for batch_size in (1, 4):
            ds = make_dataset(n, seed=n)
            sampler = DistributedSampler(ds, shuffle=True, seed=11)
            loader = DataLoader(ds, batch_size=batch_size, sampler=sampler)
            label = f"W={world_size} N={n} batch={batch_size} rank={rank}"

            def step(engine, batch):
                probs, target = batch
                return {"y_pred": probs, "y": target, "loss": per_sample_loss(probs, target)}

            evaluator = Engine(step)
            attach(make_metrics(), evaluator, "metrics")
            attach(MeanMetric(), evaluator, "loss", output_transform=lambda out: out["loss"])

            @evaluator.on(Events.EPOCH_STARTED)
            def _(engine):
                sampler.set_epoch(engine.state.epoch)

            evaluator.run(loader, max_epochs=2)  # two epochs: the second starts from scratch
            assert evaluator.state.epoch == 2
            check_against_sklearn(
                evaluator.state.metrics["metrics"], evaluator.state.metrics["loss"], ds, "ignite " + label
            )

            hook = MetricHook(make_metrics())
            loss_hook = MetricHook(MeanMetric())
            for epoch in range(2):
                sampler.set_epoch(epoch)
                with hook.epoch(loader), loss_hook.epoch(loader):
                    for probs, target in loader:
                        hook.update(probs, target)
                        loss_hook.update(per_sample_loss(probs, target))
                check_against_sklearn(hook.result, loss_hook.result.item(), ds, f"loop epoch {epoch} " + label)


@pytest.mark.parametrize("world_size", [2, 3])
def test_ignite_and_plain_loop_equal_sklearn(world_size):
    run_distributed(_ignite_and_plain_loop, world_size)
