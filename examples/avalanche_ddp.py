"""torchtally in an Avalanche continual-learning run under DDP (`make avalanche-demo`).

    python -m torch.distributed.run --nproc_per_node=2 --standalone examples/avalanche_ddp.py

(in the Avalanche environment, `make avalanche-venv`). Two gloo processes train Avalanche's
Naive strategy on a toy benchmark of 3 experiences with DistributedDataParallel and evaluate
after each experience on test sets of 501 samples, which Avalanche's distributed loaders pad
to 502. The evaluator is Avalanche's EvaluationPlugin with torchtally's accuracy_metrics and
loss_metrics (the one-line swap) beside Avalanche's own experience accuracy, renamed. Rank 0
prints, per experience, torchtally's synced accuracy, Avalanche's own (rank 0's shard only)
and scikit-learn over the whole test set in one process.
"""

import os
import sys

import torch
import torch.distributed

# Avalanche must be imported before the process group exists (it builds a logger on import
# and refuses to on a non-main rank).
from avalanche.benchmarks.scenarios.deprecated.generic_benchmark_creation import (
    create_generic_benchmark_from_tensor_lists,
)
from avalanche.evaluation.metrics import ExperienceAccuracy
from avalanche.training.plugins import EvaluationPlugin
from avalanche.training.supervised import Naive
from torch import nn

from torchtally.adapters.avalanche import accuracy_metrics, loss_metrics

FEATURES, CLASSES, TRAIN_SIZE, TEST_SIZE = 8, 4, 600, 501


class AvalancheOwnAccuracy(ExperienceAccuracy):
    """Avalanche's own experience accuracy, under another name so both can be logged."""

    def __str__(self):
        return "Avalanche_Top1_Acc_Exp"


def make_benchmark():
    g = torch.Generator().manual_seed(0)
    train, test = [], []
    for _ in range(3):
        centers = torch.randn(CLASSES, FEATURES, generator=g)
        for n, out in ((TRAIN_SIZE, train), (TEST_SIZE, test)):
            y = torch.randint(0, CLASSES, (n,), generator=g)
            out.append((centers[y] + 1.5 * torch.randn(n, FEATURES, generator=g), y))
    return create_generic_benchmark_from_tensor_lists(
        train_tensors=train, test_tensors=test, task_labels=[0, 0, 0]
    ), test


def main() -> int:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        torch.distributed.init_process_group("gloo")
    rank = torch.distributed.get_rank() if world > 1 else 0
    benchmark, test = make_benchmark()
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, CLASSES))
    model = nn.parallel.DistributedDataParallel(net) if world > 1 else net
    evaluator = EvaluationPlugin(
        accuracy_metrics(epoch=True, experience=True, stream=True),  # torchtally's: synced
        loss_metrics(epoch=True, experience=True, stream=True),
        AvalancheOwnAccuracy(),  # Avalanche's: per rank
        loggers=[],
    )
    strategy = Naive(
        model=model,
        optimizer=torch.optim.SGD(model.parameters(), lr=0.05),
        criterion=nn.CrossEntropyLoss(),
        train_mb_size=16,
        train_epochs=2,
        eval_mb_size=64,
        device="cpu",
        evaluator=evaluator,
    )
    ok = True
    for i, experience in enumerate(benchmark.train_stream):
        strategy.train(experience)
        results = strategy.eval(benchmark.test_stream)
        if rank != 0:
            continue
        print(f"after training on experience {i}:")
        print("  test exp   torchtally (synced)   Avalanche's own (rank 0)   sklearn, 1 process")
        for e, (x, y) in enumerate(test):
            from sklearn.metrics import accuracy_score

            with torch.no_grad():
                truth = accuracy_score(y.numpy(), net(x).argmax(dim=1).numpy())
            ours = results[f"Top1_Acc_Exp/eval_phase/test_stream/Task000/Exp{e:03d}"]
            theirs = results[f"Avalanche_Top1_Acc_Exp/eval_phase/test_stream/Task000/Exp{e:03d}"]
            ok &= abs(ours - truth) < 1e-6
            print(f"  {e:8d}   {ours:19.6f}   {theirs:24.6f}   {truth:18.6f}")
    if rank == 0:
        print("torchtally equals scikit-learn on every experience:", "yes" if ok else "NO")
    if world > 1:
        torch.distributed.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
