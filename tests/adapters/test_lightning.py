"""MetricCallback on a real Lightning Trainer in one process: stages, sanity check, logging,
several loaders, and padding found through Lightning's loops (ranks simulated with
DistributedSampler(num_replicas=W, rank=r), which Lightning keeps on a single device)."""

import warnings

import lightning.pytorch as pl
import pytest
import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from torchtally import Metric
from torchtally.adapters.lightning import MetricCallback


class Seen(Metric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("ids", torch.empty(0, dtype=torch.int64), reduce="cat")

    def update(self, preds, ids):
        self.append_state("ids", ids)

    def compute(self):
        return self.ids.clone()


class Correct(Metric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("counts", torch.zeros(2, dtype=torch.int64), reduce="sum")

    def update(self, preds, target):
        self.counts = self.counts + torch.stack([(preds.argmax(1) == target).sum(), torch.tensor(len(target))])

    def compute(self):
        return {"correct": self.counts[0], "accuracy": self.counts[0] / self.counts[1]}


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 3)

    def training_step(self, batch, batch_idx):
        x, y, _ = batch
        loss = torch.nn.functional.cross_entropy(self.layer(x), y)
        return {"loss": loss, "y_pred": self.layer(x).detach(), "y": y}

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        x, y, ids = batch
        return self.layer(x), y, ids

    def test_step(self, batch, batch_idx):
        x, y, ids = batch
        return self.layer(x), y, ids

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def data(n):
    g = torch.Generator().manual_seed(n)
    return TensorDataset(torch.randn(n, 4, generator=g), torch.randint(0, 3, (n,), generator=g), torch.arange(n))


def trainer(callbacks, **kwargs):
    kwargs.setdefault("logger", False)
    return pl.Trainer(
        accelerator="cpu",
        devices=1,
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        callbacks=callbacks,
        **kwargs,
    )


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module="lightning")
        yield


def test_validation_in_fit_logs_exact_scalars_and_ignores_the_sanity_check():
    ds = data(23)
    callback = MetricCallback({"acc": Correct()}, output_transform=lambda out, batch: (out[0], out[1]))
    seen = MetricCallback(Seen(), output_transform=lambda out, batch: (out[0], out[2]))
    model = Model()
    t = trainer([callback, seen], max_epochs=2, num_sanity_val_steps=2)
    t.fit(model, DataLoader(ds, batch_size=5), DataLoader(ds, batch_size=4))
    assert sorted(seen.result.tolist()) == list(range(23))  # not the sanity check's 8
    x, y, _ = ds.tensors
    with torch.no_grad():
        correct = int((model.layer(x).argmax(1) == y).sum())
    assert callback.result["correct"].item() == correct  # a dict result is flattened (torchmetrics)
    assert t.callback_metrics["val_correct"].item() == correct
    assert t.callback_metrics["val_accuracy"].item() == pytest.approx(correct / 23)
    assert "val_metric" not in t.callback_metrics  # the Seen vector is not loggable


def test_simulated_ranks_each_drop_their_padding_in_validate_and_test():
    n, w = 10, 4
    ds = data(n)
    model = Model()
    for stage in ("validate", "test"):
        seen = []
        for r in range(w):
            callback = MetricCallback(Seen(), stage=stage, output_transform=lambda out, batch: (out[0], out[2]))
            t = trainer([callback])
            loader = DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, num_replicas=w, rank=r))
            getattr(t, stage)(model, loader, verbose=False)
            assert isinstance(
                t.val_dataloaders.sampler if stage == "validate" else t.test_dataloaders.sampler, DistributedSampler
            )
            seen += callback.result.tolist()
        assert sorted(seen) == list(range(n)), stage


def test_several_validation_loaders_accumulate_each_without_padding():
    a, b = data(5), data(7)
    callback = MetricCallback(Seen(), output_transform=lambda out, batch: (out[0], out[2]))
    loaders = [
        DataLoader(a, batch_size=2, sampler=DistributedSampler(a, num_replicas=2, rank=1)),  # 1, 3, pad
        DataLoader(b, batch_size=3, sampler=DistributedSampler(b, num_replicas=2, rank=1, shuffle=False)),
    ]
    trainer([callback]).validate(Model(), loaders, verbose=False)
    expected = list(loaders[0].sampler)[:2] + [1, 3, 5]
    assert sorted(callback.result.tolist()) == sorted(expected)


def test_train_stage_reads_the_training_step_dict():
    ds = data(9)
    callback = MetricCallback({"acc": Correct()}, stage="train")
    t = trainer([callback], max_epochs=1)
    t.fit(Model(), DataLoader(ds, batch_size=4))
    assert callback.result["correct"] <= 9 and "train_accuracy" in t.callback_metrics
    # the ignite-style dict was used: 9 samples counted
    assert callback.hook.metrics["acc"].counts[1].item() == 9


def test_a_step_returning_none_needs_an_output_transform():
    class NoOutput(Model):
        def validation_step(self, batch, batch_idx):
            return None

    callback = MetricCallback(Seen())
    with pytest.raises(ValueError, match="output_transform"):
        trainer([callback]).validate(NoOutput(), DataLoader(data(4), batch_size=2), verbose=False)


def test_bad_arguments():
    with pytest.raises(ValueError, match="stage"):
        MetricCallback(Seen(), stage="predict")
    with pytest.raises(TypeError, match="output_transform"):
        MetricCallback(Seen(), output_transform="x")


# ---- self.log(name, metric) / self.log_dict(collection), as with torchmetrics' metrics ------------


class Recorder(pl.loggers.Logger):
    """Every row Lightning logs, in order (on_step rows and epoch rows)."""

    def __init__(self):
        super().__init__()
        self.rows = []

    name = "recorder"
    version = 0

    def log_metrics(self, metrics, step=None):
        self.rows.append({k: float(v) for k, v in metrics.items() if k != "epoch"})

    def log_hyperparams(self, *args, **kwargs):
        pass


class LoggingModel(pl.LightningModule):
    """Logs the same metrics twice: torchtally's (tt_*) and torchmetrics' (tm_*), by the idiom
    ``self.log(name, metric)`` for single metrics and ``self.log_dict(collection)`` for collections."""

    def __init__(self, collection):
        super().__init__()
        import torchmetrics
        import torchmetrics.classification as tmc

        from torchtally import MetricCollection
        from torchtally.classification import MulticlassAccuracy, MulticlassF1Score

        self.layer = torch.nn.Linear(4, 3)
        self.use_collection = collection
        self.tt_train = MulticlassAccuracy(num_classes=3)
        self.tm_train = tmc.MulticlassAccuracy(num_classes=3)
        self.tt_val = MulticlassAccuracy(num_classes=3, average="micro")
        self.tm_val = tmc.MulticlassAccuracy(num_classes=3, average="micro")
        if collection:  # accuracy and F1 share one state in torchtally's collection
            self.tt_coll = MetricCollection(
                {"acc": MulticlassAccuracy(num_classes=3), "f1": MulticlassF1Score(num_classes=3)}, prefix="tt_"
            )
            self.tm_coll = torchmetrics.MetricCollection(
                {"acc": tmc.MulticlassAccuracy(num_classes=3), "f1": tmc.MulticlassF1Score(num_classes=3)}, prefix="tm_"
            )

    def training_step(self, batch, batch_idx):
        x, y, _ = batch
        logits = self.layer(x)
        for name, metric in (("tt_train", self.tt_train), ("tm_train", self.tm_train)):
            metric(logits.detach(), y)
            self.log(name, metric, on_step=True, on_epoch=True)
        return torch.nn.functional.cross_entropy(logits, y)

    def validation_step(self, batch, batch_idx):
        x, y, _ = batch
        logits = self.layer(x)
        if self.use_collection:
            for coll in (self.tt_coll, self.tm_coll):
                coll(logits, y)
                self.log_dict(coll, on_step=True, on_epoch=True)
        for name, metric in (("tt_val", self.tt_val), ("tm_val", self.tm_val)):
            metric(logits, y)
            self.log(name, metric, on_step=True, on_epoch=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=1.0)


def _fit_and_record(collection):
    torch.manual_seed(0)
    ds = data(29)
    recorder = Recorder()
    model = LoggingModel(collection)
    t = trainer([], logger=recorder, max_epochs=2, num_sanity_val_steps=0, log_every_n_steps=1)
    t.fit(model, DataLoader(ds, batch_size=4), DataLoader(ds, batch_size=5))
    return recorder.rows, model, ds, t


def _pairs(rows):
    """Each logged row's torchtally values beside torchmetrics' (key -> (tt, tm))."""
    out = []
    for row in rows:
        tt = {k[3:]: v for k, v in row.items() if k.startswith("tt_")}
        tm = {k[3:]: v for k, v in row.items() if k.startswith("tm_")}
        assert tt.keys() == tm.keys(), row
        out.append({k: (tt[k], tm[k]) for k in tt})
    return out


def test_self_log_a_metric_gives_torchmetrics_step_and_epoch_values_and_resets_each_epoch():
    rows, model, ds, t = _fit_and_record(collection=False)
    pairs = _pairs(rows)
    step_rows = [p for p in pairs if "train_step" in p]
    assert len(step_rows) == 2 * 8  # 29 samples in batches of 4: 8 steps an epoch, every step logged
    for p in pairs:
        for key, (tt, tm) in p.items():
            assert tt == pytest.approx(tm, abs=1e-6), (key, p)
    epochs = [p for p in pairs if "val_epoch" in p]
    assert len(epochs) == 2 and epochs[0]["val_epoch"] != epochs[1]["val_epoch"]  # the model learnt
    # the last epoch's value is over that epoch's batches only (reset between epochs)
    x, y, _ = ds.tensors
    with torch.no_grad():
        hits = (model.layer(x).argmax(1) == y).double().mean().item()
    assert epochs[1]["val_epoch"][0] == pytest.approx(hits, abs=1e-6)
    assert t.callback_metrics["tt_val"].item() == pytest.approx(hits, abs=1e-6)
    # on_step: each validation step's row holds the value of that batch alone (forward's)
    val_steps = [p["val_step"][0] for p in pairs if "val_step" in p]
    with torch.no_grad():
        hit = (model.layer(x).argmax(1) == y).double()
    batches = [hit[i : i + 5].mean().item() for i in range(0, 29, 5)]
    assert val_steps[-6:] == pytest.approx(batches, abs=1e-6)
    assert not isinstance(model.tt_val._forward_cache, torch.Tensor)  # Lightning reset it after the epoch


def test_log_dict_of_a_metric_collection_gives_what_torchmetrics_collection_gives():
    rows, model, ds, _ = _fit_and_record(collection=True)
    pairs = _pairs(rows)
    seen = set()
    for p in pairs:
        for key, (tt, tm) in p.items():
            assert tt == pytest.approx(tm, abs=1e-6), (key, p)
            seen.add(key)
    assert {"acc_step", "acc_epoch", "f1_step", "f1_epoch"} <= seen
    assert model.tt_coll["acc"].update_count == 0  # Lightning reset every metric of the collection


def test_a_metric_logged_but_not_an_attribute_is_refused_as_for_torchmetrics():
    from torchtally.classification import MulticlassAccuracy

    class Stray(Model):
        def validation_step(self, batch, batch_idx):
            x, y, _ = batch
            metric = MulticlassAccuracy(num_classes=3)
            metric(self.layer(x), y)
            self.log("acc", metric)

    with pytest.raises(Exception, match="Could not find the `LightningModule` attribute"):
        trainer([]).validate(Stray(), DataLoader(data(4), batch_size=2), verbose=False)
