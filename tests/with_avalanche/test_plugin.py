"""torchtally.adapters.avalanche in one process, against Avalanche 0.6.0 itself: the one-line
swap gives the same names and values as Avalanche's own accuracy_metrics / loss_metrics (which
are exact in one process), any metric or collection at any level, per task, bad arguments,
and where metric state lives under DataParallel.
"""

import importlib
import types

import pytest
import torch
from torch import nn

importlib.import_module("avalanche.training")  # before any process group: it makes a logger
import seed_run
from avalanche.evaluation.metrics import accuracy_metrics as avalanche_accuracy
from avalanche.evaluation.metrics import loss_metrics as avalanche_loss
from avalanche.training.plugins import EvaluationPlugin

from torchtally import MeanMetric, MetricCollection
from torchtally.adapters.avalanche import AccuracyPlugin, LossPlugin, TallyPluginMetric, accuracy_metrics, loss_metrics
from torchtally.classification import MulticlassAccuracy

LEVELS = dict(minibatch=True, epoch=True, epoch_running=True, experience=True, stream=True)


def _curves(accuracy, loss, epochs=1):
    evaluator = EvaluationPlugin(accuracy(**LEVELS), loss(**LEVELS), loggers=[])
    seed_run.run(evaluator, train_mb=32, eval_mb=64, epochs=epochs)
    return seed_run.curves_of(evaluator)


@pytest.fixture(scope="module")
def both():
    return _curves(avalanche_accuracy, avalanche_loss), _curves(accuracy_metrics, loss_metrics)


def test_the_swap_logs_the_names_avalanche_logs(both):
    theirs, ours = both
    assert sorted(ours) == sorted(theirs)
    for prefix in (
        "Top1_Acc_MB/",
        "Top1_Acc_Epoch/",
        "Top1_RunningAcc_Epoch/",
        "Top1_Acc_Exp/",
        "Top1_Acc_Stream/",
        "Loss_MB/",
        "Loss_Epoch/",
        "RunningLoss_Epoch/",
        "Loss_Exp/",
        "Loss_Stream/",
    ):
        assert any(name.startswith(prefix) for name in ours), prefix


def test_the_swap_logs_the_values_avalanche_logs_in_one_process(both):
    theirs, ours = both
    for name in theirs:
        assert ours[name]["x"] == theirs[name]["x"], name
        assert ours[name]["values"] == pytest.approx(theirs[name]["values"], rel=1e-6, abs=1e-7), name


def test_every_plugin_supports_distributed():
    plugins = accuracy_metrics(**LEVELS) + loss_metrics(**LEVELS)
    assert len(plugins) == 10 and all(p.supports_distributed for p in plugins)
    assert [str(p) for p in accuracy_metrics(**LEVELS)] == [str(p) for p in avalanche_accuracy(**LEVELS)]
    assert [str(p) for p in loss_metrics(**LEVELS)] == [str(p) for p in avalanche_loss(**LEVELS)]


def test_a_collection_and_per_task_results():
    from torchtally.classification import MulticlassF1Score

    collection = TallyPluginMetric(
        MetricCollection(
            {
                "acc": MulticlassAccuracy(num_classes=seed_run.CLASSES, average="micro"),
                "f1": MulticlassF1Score(num_classes=seed_run.CLASSES, average="macro"),
            }
        ),
        "Coll",
        level="experience",
    )
    per_task = AccuracyPlugin("stream", split_by_task=True, name="Acc_PerTask")
    whole = AccuracyPlugin("stream")
    evaluator = EvaluationPlugin(collection, per_task, whole, loggers=[])
    sklearn = seed_run.run(evaluator, train_mb=64, eval_mb=128, epochs=1)
    curves = seed_run.curves_of(evaluator)
    for task in seed_run.TASK_LABELS:
        values = curves[f"Acc_PerTask/eval_phase/test_stream/Task{task:03d}"]["values"]
        # per task label = per experience here: scikit-learn's accuracy after each training exp
        assert values == pytest.approx([scores[task]["acc"] for scores in sklearn], rel=1e-6)
        exp = f"eval_phase/test_stream/Task{task:03d}/Exp{task:03d}"
        assert curves[f"Coll_acc/{exp}"]["values"] == pytest.approx(values, rel=1e-6)
        assert curves[f"Coll_f1/{exp}"]["values"] == pytest.approx([s[task]["f1"] for s in sklearn], rel=1e-6)
    total = sum(seed_run.TEST_SIZES)
    stream = curves["Top1_Acc_Stream/eval_phase/test_stream/Task002"]["values"]
    assert stream == pytest.approx([sum(s["correct"] for s in scores) / total for scores in sklearn], rel=1e-6)
    assert AccuracyPlugin("stream").result() is None  # never updated: no value, no error


def _strategy(**fields):
    base = dict(
        mb_output=torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]]),
        mb_y=torch.tensor([1, 0, 0]),
        mb_task_id=torch.tensor([0, 0, 1]),
        experience=types.SimpleNamespace(task_labels=[0, 1]),
        dataloader=[None],
        model=nn.Linear(2, 2),
        loss=torch.tensor(0.5),
    )
    base.update(fields)
    return types.SimpleNamespace(**base)


def test_bad_arguments_are_refused_with_their_name():
    with pytest.raises(ValueError, match="level"):
        AccuracyPlugin("batch")
    with pytest.raises(ValueError, match="level"):
        TallyPluginMetric(MeanMetric(), "m", level="epoch", mode="eval")
    with pytest.raises(ValueError, match="mode"):
        TallyPluginMetric(MeanMetric(), "m", mode="test")
    with pytest.raises(TypeError, match="metric"):
        TallyPluginMetric(object(), "m")
    with pytest.raises(TypeError, match="update_from"):
        TallyPluginMetric(MeanMetric(), "m", update_from=3)


def test_an_unknown_task_label_raises_before_any_update():
    plugin = AccuracyPlugin("experience", split_by_task=True)
    plugin.update(_strategy())
    before = {t: float(m.compute()) for t, m in plugin.metrics.items()}
    with pytest.raises(ValueError, match="mb_task_id.*5"):
        plugin.update(_strategy(mb_task_id=torch.tensor([0, 5, 1])))
    assert {t: float(m.compute()) for t, m in plugin.metrics.items()} == before
    assert plugin.result() == {0: pytest.approx(1.0), 1: pytest.approx(0.0)}


def test_the_loss_is_weighted_by_batch_size():
    plugin = LossPlugin("experience")
    plugin.update(_strategy(loss=torch.tensor(1.0)))  # 3 rows
    plugin.update(_strategy(loss=torch.tensor(3.0), mb_y=torch.tensor([1]), mb_output=torch.zeros(1, 2)))
    assert plugin.result() == pytest.approx((3 * 1.0 + 1 * 3.0) / 4)


class DeviceRecorder:
    """A metric-like object that records where it was put and where its inputs arrive."""

    def __init__(self):
        self.moved_to, self.devices = None, []

    def reset(self):
        pass

    def to(self, device):
        self.moved_to = torch.device(device)
        return self

    def update(self, preds, target):
        self.devices.append((preds.device, target.device))

    def compute(self):
        return torch.tensor(0.0)


def test_data_parallel_state_and_inputs_go_to_the_output_device():
    metric = DeviceRecorder()
    plugin = TallyPluginMetric(metric, "m", level="experience")
    # CPU-only torch: DataParallel wraps nothing and outputs come from the module's device
    model = nn.DataParallel(nn.Linear(2, 2).to("meta"))
    plugin.update(_strategy(model=model))
    assert metric.moved_to == torch.device("meta")
    assert metric.devices == [(torch.device("meta"), torch.device("meta"))]


def test_data_parallel_on_several_gpus_uses_its_output_device():
    # the attributes a multi-GPU DataParallel has, without the GPUs (only the device is read)
    dp = nn.DataParallel.__new__(nn.DataParallel)
    nn.Module.__init__(dp)
    dp.module = nn.Linear(2, 2)
    dp.device_ids, dp.output_device, dp.src_device_obj = [1, 0], 1, torch.device("cuda", 1)
    plugin = TallyPluginMetric(DeviceRecorder(), "m")
    plugin.place_for(_strategy(model=dp))
    assert plugin.device == torch.device("cuda", 1)
    # an explicit device wins over the model's
    fixed = TallyPluginMetric(DeviceRecorder(), "m", device="meta")
    fixed.place_for(_strategy(model=dp))
    assert fixed.device == torch.device("meta")


def test_a_data_parallel_model_may_not_hold_the_metric():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(2, 2)
            self.acc = DeviceRecorder()

    plugin = TallyPluginMetric(DeviceRecorder(), "m")
    with pytest.raises(ValueError, match="DataParallel"):
        plugin.update(_strategy(model=nn.DataParallel(Net())))


def test_a_batch_of_padding_only_changes_nothing():
    from torchtally.adapters.avalanche.loaders import RowFilter

    accuracy, loss = AccuracyPlugin("experience"), LossPlugin("experience")
    for plugin in (accuracy, loss):
        plugin.update(_strategy())
        plugin._filter = RowFilter(iter([[False, False, False]]), describe="padded loader")
        plugin.update(_strategy(loss=torch.tensor(9.0)))  # every row is a padding duplicate
    assert accuracy.result() == pytest.approx(2 / 3)  # rows 0 and 1 of the first batch
    assert loss.result() == pytest.approx(0.5)


def test_a_periodic_evaluation_does_not_restart_a_training_pass():
    from torchtally.adapters.avalanche.loaders import RowFilter

    train, evaluation = AccuracyPlugin("epoch"), AccuracyPlugin("experience")
    strategy = _strategy(clock=types.SimpleNamespace(train_iterations=0))
    for plugin in (train, evaluation):
        plugin.before_training_epoch(strategy)
        # a training pass of 2 batches whose last row is padding
        plugin._filter = RowFilter(iter([[True] * 3, [True, True, False]]), describe="loader")
    train.after_training_iteration(strategy)
    for plugin in (train, evaluation):  # Avalanche's eval_every: an evaluation mid-epoch
        plugin.before_eval_exp(strategy)
    assert evaluation._filter is None and train._filter is not None
    train.after_training_iteration(strategy)  # row 2 (a hit... or not) is dropped
    assert train.result() == pytest.approx(4 / 5)  # rows 0, 1 of both batches hit, row 2 of the first misses


def test_avalanches_loggers_show_the_values(tmp_path):
    import csv
    import io

    from avalanche.logging import CSVLogger, TextLogger

    text = io.StringIO()
    csv_logger = CSVLogger(log_folder=str(tmp_path))
    evaluator = EvaluationPlugin(
        accuracy_metrics(epoch=True, experience=True),
        loss_metrics(epoch=True, experience=True),
        loggers=[TextLogger(text), csv_logger],
    )
    seed_run.run(evaluator, train_mb=64, eval_mb=128, epochs=1)
    csv_logger.close()
    curves = seed_run.curves_of(evaluator)
    for name in (
        "Top1_Acc_Epoch/train_phase/train_stream/Task000",
        "Top1_Acc_Exp/eval_phase/test_stream/Task001/Exp001",
    ):
        assert f"{name} = {curves[name]['values'][-1]:.4f}" in text.getvalue()
    with open(tmp_path / "eval_results.csv") as f:
        rows = list(csv.DictReader(f))
    # CSVLogger picks Top1_Acc_Exp / Loss_Exp by name: one row per (training exp, test exp)
    assert len(rows) == 9
    last = [r for r in rows if r["training_exp"] == "2" and r["eval_exp"] == "1"][0]
    assert float(last["eval_accuracy"]) == pytest.approx(
        curves["Top1_Acc_Exp/eval_phase/test_stream/Task001/Exp001"]["values"][-1], abs=1e-4
    )
    assert float(last["eval_loss"]) == pytest.approx(
        curves["Loss_Exp/eval_phase/test_stream/Task001/Exp001"]["values"][-1], abs=1e-4
    )
