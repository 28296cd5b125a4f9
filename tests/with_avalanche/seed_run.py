"""The seed's test run: a toy benchmark of 3 experiences, 2 epochs each, Avalanche's Naive
strategy, evaluated by torchtally's Avalanche plugins at every level; writes what the
EvaluationPlugin recorded as JSON (one file per rank).

    python tests/with_avalanche/seed_run.py --out run.json                        # 1 process
    python -m torch.distributed.run --standalone --nproc_per_node=2 \\
        tests/with_avalanche/seed_run.py --out run.json --train-mb 8 --eval-mb 16  # 2 gloo ranks

What makes a 1-process run and a W-process run comparable: the model is float64 and DDP-wrapped
on W ranks; training uses shuffle=False, so the W ranks' batch j (DistributedSampler hands rank r
the samples r, r+W, ...) is, together, the 1-process batch j of W times the size; DDP averages
the W equal-size batch means, which is the 1-process batch mean up to float64 rounding. The
training sets (600 per experience) divide by 2 and 3, so training has no padding; the test sets
(503, 499, 505) divide by neither, so evaluation has padding on some ranks. With the same
initial weights the models then stay equal to ~1e-15, every prediction is the same, and every
logged value (minibatch, running epoch, epoch, experience, stream; accuracy, loss, a
collection, per task) must match the 1-process run with W times the batch sizes.
"""

import argparse
import json
import os

import torch
import torch.distributed
from avalanche.benchmarks.scenarios.deprecated.generic_benchmark_creation import (
    create_generic_benchmark_from_tensor_lists,
)
from avalanche.training.plugins import EvaluationPlugin
from avalanche.training.supervised import Naive
from torch import nn

from torchtally import MetricCollection
from torchtally.adapters.avalanche import AccuracyPlugin, TallyPluginMetric, accuracy_metrics, loss_metrics
from torchtally.classification import MulticlassAccuracy, MulticlassAUROC, MulticlassF1Score

FEATURES, CLASSES = 8, 4
TRAIN_SIZES = (600, 600, 600)
TEST_SIZES = (503, 499, 505)
TASK_LABELS = (0, 1, 2)


def make_tensors(seed: int = 0):
    """Per experience (x, y) for training and testing: class-dependent Gaussian blobs that a
    small MLP learns partly in 2 epochs (so accuracies are neither 0 nor 1)."""
    g = torch.Generator().manual_seed(seed)
    train, test = [], []
    for n_train, n_test in zip(TRAIN_SIZES, TEST_SIZES):
        centers = torch.randn(CLASSES, FEATURES, generator=g, dtype=torch.float64)
        for n, out in ((n_train, train), (n_test, test)):
            y = torch.randint(0, CLASSES, (n,), generator=g)
            x = centers[y] + 1.5 * torch.randn(n, FEATURES, generator=g, dtype=torch.float64)
            out.append((x, y))
    return train, test


def make_evaluator():
    levels = dict(minibatch=True, epoch=True, epoch_running=True, experience=True, stream=True)
    collection = MetricCollection(
        {
            "acc": MulticlassAccuracy(num_classes=CLASSES, average="micro"),
            "f1": MulticlassF1Score(num_classes=CLASSES, average="macro"),
            "auroc": MulticlassAUROC(num_classes=CLASSES, thresholds=None),
        }
    )
    return EvaluationPlugin(
        accuracy_metrics(**levels),
        loss_metrics(**levels),
        AccuracyPlugin("experience", split_by_task=True, name="Top1_Acc_Exp_PerTask"),
        AccuracyPlugin("stream", split_by_task=True, name="Top1_Acc_Stream_PerTask"),
        TallyPluginMetric(collection, "Coll_Exp", level="experience"),
        loggers=[],
    )


def sklearn_scores(model, test):
    """accuracy and macro F1 over each experience's full test set, by scikit-learn."""
    from sklearn.metrics import accuracy_score, f1_score

    model = getattr(model, "module", model)
    scores = []
    with torch.no_grad():
        for x, y in test:
            preds = model(x).argmax(dim=1)
            scores.append(
                {
                    "acc": accuracy_score(y.numpy(), preds.numpy()),
                    "f1": f1_score(y.numpy(), preds.numpy(), average="macro"),
                    "correct": int((preds == y).sum()),
                }
            )
    return scores


def run(evaluator, train_mb: int, eval_mb: int, epochs: int = 2, world: int = 1):
    """Train and evaluate the toy benchmark; return scikit-learn's scores after each
    evaluation (the curves are in ``evaluator``)."""
    train, test = make_tensors()
    benchmark = create_generic_benchmark_from_tensor_lists(
        train_tensors=train, test_tensors=test, task_labels=list(TASK_LABELS)
    )
    torch.manual_seed(0)  # the same initial weights in every process
    model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, CLASSES)).double()
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model)
    strategy = Naive(
        model=model,
        optimizer=torch.optim.SGD(model.parameters(), lr=0.05),
        criterion=nn.CrossEntropyLoss(),
        train_mb_size=train_mb,
        train_epochs=epochs,
        eval_mb_size=eval_mb,
        device="cpu",
        evaluator=evaluator,
    )
    sklearn = []
    for experience in benchmark.train_stream:
        strategy.train(experience, shuffle=False)
        strategy.eval(benchmark.test_stream)
        sklearn.append(sklearn_scores(strategy.model, test))
    return sklearn


def curves_of(evaluator):
    """Every value the EvaluationPlugin recorded: ``{name: {"x": [...], "values": [...]}}``."""
    return {
        name: {"x": list(xs), "values": [_jsonable(v) for v in values]}
        for name, (xs, values) in evaluator.get_all_metrics().items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file; rank r writes <out>.rank<r>")
    parser.add_argument("--train-mb", type=int, default=8, help="training batch size per rank")
    parser.add_argument("--eval-mb", type=int, default=16, help="evaluation batch size per rank")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        torch.distributed.init_process_group("gloo")
    rank = torch.distributed.get_rank() if world > 1 else 0
    evaluator = make_evaluator()
    sklearn = run(evaluator, args.train_mb, args.eval_mb, args.epochs, world)
    with open(f"{args.out}.rank{rank}", "w") as f:
        json.dump(
            {
                "world_size": world,
                "rank": rank,
                "curves": curves_of(evaluator),
                "sklearn": sklearn,
                "test_sizes": list(TEST_SIZES),
            },
            f,
        )
    if world > 1:
        torch.distributed.destroy_process_group()


def _jsonable(value):
    if isinstance(value, torch.Tensor):
        return value.tolist()
    return value


if __name__ == "__main__":
    main()
