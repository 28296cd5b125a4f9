"""AccelerateMetricHook in real multi-process Accelerate runs on CPU (gloo): processes started by
torchtally.testing.run_distributed with an Accelerator(cpu=True) inside, and one job started by
``accelerate launch``. N = 19 does not divide into rounds of 2 or 3 batches of 4, so with
even_batches=True Accelerate repeats samples from the start of the dataset; every rank's synced
result must equal one process over the dataset, and a plain loop must count the repeats.
The hook's ``save_state`` checkpoint, saved on 3 processes, loads on 2, and saved on 2 loads on
3, with every rank's synced result that of one process.
"""

import json
import os
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
from support.launcher_eval import (
    BATCH,
    as_plain,
    assert_equal_results,
    evaluate,
    evaluate_without_adapter,
    make_collection,
    make_dataset,
    single_process,
)
from torch.utils.data import DataLoader

from torchtally.testing import run_distributed

pytestmark = pytest.mark.distributed

N = 19
SUPPORT = Path(__file__).resolve().parents[1] / "support"


def _as_accelerate_process(rank, world_size):
    """Tell Accelerate that this process is rank ``rank`` of an existing CPU group (as torchrun would)."""
    os.environ.update(
        RANK=str(rank),
        WORLD_SIZE=str(world_size),
        LOCAL_RANK=str(rank),
        LOCAL_WORLD_SIZE=str(world_size),
        OMP_NUM_THREADS="1",
    )


def _sharding_cases(accelerator, world_size):
    """Every rank's synced result over loaders prepared with even_batches / split_batches on and
    off, shuffled, and (without the adapter) what a plain loop counts."""
    from torchtally.adapters.accelerate import AccelerateMetricHook

    out = {}
    for even in (True, False):
        for split in (False, True):
            accelerator.dataloader_config.even_batches = even
            accelerator.dataloader_config.split_batches = split
            batch = BATCH * world_size if split else BATCH  # split: each process gets BATCH rows
            loader = accelerator.prepare(DataLoader(make_dataset(N), batch_size=batch))
            hook = AccelerateMetricHook(make_collection(), accelerator=accelerator)
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # a supported loader gives no warning
                out[even, split] = evaluate(hook, loader)
            out[even, split, "rows"] = sum(len(t) for _, t in loader)
    # shuffled: the repeats are the first rows of the permuted stream, the same positions
    accelerator.dataloader_config.even_batches, accelerator.dataloader_config.split_batches = True, False
    shuffled = accelerator.prepare(DataLoader(make_dataset(N), batch_size=BATCH, shuffle=True))
    out["shuffled"] = evaluate(AccelerateMetricHook(make_collection(), accelerator=accelerator), shuffled)
    # the same loader, without the adapter: the repeats are counted
    loader = accelerator.prepare(DataLoader(make_dataset(N), batch_size=BATCH))
    out["plain"] = evaluate_without_adapter(make_collection(), loader)
    return out


def _accelerate_ranks(rank, world_size, save_dir, load_dir, sharding_cases):
    """One Accelerate job: the sharding cases (if asked); ``load_state(load_dir)`` of a checkpoint
    saved at another world size, then one more epoch; an epoch, ``save_state(save_dir)`` and
    ``load_state`` of it at this world size. The hook is registered beside a bare collection
    (made persistent), which comes back with process 0's state on every process."""
    _as_accelerate_process(rank, world_size)
    from accelerate import Accelerator

    from torchtally.adapters.accelerate import AccelerateMetricHook

    accelerator = Accelerator(cpu=True)
    assert accelerator.num_processes == world_size
    out = _sharding_cases(accelerator, world_size) if sharding_cases else {}
    accelerator.dataloader_config.even_batches, accelerator.dataloader_config.split_batches = True, False
    loader = accelerator.prepare(DataLoader(make_dataset(N), batch_size=BATCH))
    hook = AccelerateMetricHook(make_collection(), accelerator=accelerator)
    bare = AccelerateMetricHook(make_collection(), accelerator=accelerator)
    bare.metrics.persistent(True)
    accelerator.register_for_checkpointing(hook, bare.metrics)
    if load_dir is not None:
        accelerator.load_state(load_dir)
        out["loaded_rows"] = int(hook.metrics["confmat"].compute_local().sum())
        out["loaded"] = as_plain(hook.metrics.compute())
        out["bare_loaded"] = as_plain(bare.metrics.compute())
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # saved after end_epoch: the next epoch starts from zero
            out["next_epoch"] = evaluate(hook, loader)
    if save_dir is not None:
        out["before"] = evaluate(hook, loader)
        evaluate(bare, loader)
        out["rank0_rows"] = int(bare.metrics["confmat"].compute_local().sum()) if rank == 0 else None
        accelerator.save_state(save_dir)
        hook.metrics.reset()
        bare.metrics.reset()
        accelerator.wait_for_everyone()
        accelerator.load_state(save_dir)
        out["restored"] = as_plain(hook.metrics.compute())
        out["bare"] = as_plain(bare.metrics.compute())
    return out


def _check_sharding_cases(results, expected):
    for rank, out in enumerate(results):
        for even in (True, False):
            for split in (False, True):
                label = f"rank {rank}, even_batches={even}, split_batches={split}"
                assert_equal_results(out[even, split], expected, label)
        counted = int(out["plain"]["confmat"].sum())
        assert counted > N, f"rank {rank}: a plain loop counted {counted} samples"
        assert not torch.equal(out["plain"]["confmat"], expected["confmat"])
        assert_equal_results(out["shuffled"], expected, f"rank {rank}, shuffle=True")
    # the loaders really repeat samples with even_batches (else the test proves nothing)
    assert sum(out[True, False, "rows"] for out in results) > N
    assert sum(out[False, False, "rows"] for out in results) == N


def _check_round_trip(results, expected, world_size):
    for rank, out in enumerate(results):
        assert_equal_results(out["before"], expected, f"rank {rank}, before save_state")
        assert_equal_results(out["restored"], expected, f"rank {rank}, after load_state")
        # a collection registered alone: process 0's rows on every process
        assert int(out["bare"]["confmat"].sum()) == world_size * results[0]["rank0_rows"]
    assert 0 < results[0]["rank0_rows"] < N


def _check_other_world_size(results, expected, saved_rank0_rows):
    world_size = len(results)
    for rank, out in enumerate(results):
        assert out["loaded_rows"] == (N if rank == 0 else 0), f"rank {rank}: rank 0 holds the total"
        assert_equal_results(out["loaded"], expected, f"rank {rank}, loaded at world size {world_size}")
        assert_equal_results(out["next_epoch"], expected, f"rank {rank}, the epoch after the load")
        assert int(out["bare_loaded"]["confmat"].sum()) == world_size * saved_rank0_rows


def test_accelerate_processes_equal_one_process_and_resume_at_another_world_size(tmp_path):
    """Sharding cases and a save_state / load_state round trip on 3 processes, then on 2 (which
    first loads the 3-process checkpoint), then a 3-process job that loads the 2-process one."""
    expected = single_process(N)
    at3, at2 = str(tmp_path / "at3"), str(tmp_path / "at2")
    first = run_distributed(_accelerate_ranks, 3, at3, None, True, timeout=90)
    _check_sharding_cases(first, expected)
    _check_round_trip(first, expected, 3)
    second = run_distributed(_accelerate_ranks, 2, at2, at3, True, timeout=90)
    _check_sharding_cases(second, expected)
    _check_other_world_size(second, expected, first[0]["rank0_rows"])
    _check_round_trip(second, expected, 2)
    third = run_distributed(_accelerate_ranks, 3, None, at2, False, timeout=90)
    _check_other_world_size(third, expected, second[0]["rank0_rows"])


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_accelerate_launch_job(tmp_path):
    """``accelerate launch --multi_gpu --num_processes 2`` (torchrun underneath; the script's
    Accelerator(cpu=True) makes it a gloo CPU job) with the default even_batches=True."""
    result_file = tmp_path / "result.json"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(SUPPORT.parent), env.get("PYTHONPATH", "")])
    for _ in range(3):  # a port picked free can be taken before the launcher binds it: pick again
        command = [
            sys.executable,
            "-m",
            "accelerate.commands.launch",
            "--multi_gpu",
            "--num_processes",
            "2",
            "--num_machines",
            "1",
            "--mixed_precision",
            "no",
            "--dynamo_backend",
            "no",
            "--main_process_port",
            str(_free_port()),
            str(SUPPORT / "accelerate_job.py"),
            str(N),
            str(result_file),
        ]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)
        if "address already in use" not in (done.stdout + done.stderr).lower():
            break
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    per_rank = json.loads(result_file.read_text())
    expected = {k: v.tolist() for k, v in single_process(N).items()}
    assert len(per_rank) == 2
    for rank, got in enumerate(per_rank):
        assert got["rows_seen"] > N / 2  # this rank's loader yielded repeats
        for key in ("acc", "f1", "confmat"):
            assert got[key] == expected[key], f"rank {rank}: {key}"
        assert got["auroc"] == pytest.approx(expected["auroc"], abs=1e-12)
