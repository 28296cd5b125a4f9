"""examples/resume_elastic.py under torchrun: a 3-process validation epoch killed right after a
mid-epoch checkpoint, finished by a 2-process job that must print the single-process values."""

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.distributed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _torchrun(nproc: int, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={nproc}", "--standalone"]
    return subprocess.run(
        [*cmd, "examples/resume_elastic.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_preempted_on_three_processes_finishes_exact_on_two(tmp_path):
    ckpt = str(tmp_path / "val_ckpt")
    first = _torchrun(3, "--checkpoint", ckpt, "--preempt-after", "6")
    assert first.returncode != 0, first.stdout  # killed, as a preempted job
    assert "checkpoint saved on 3 ranks after 6 batches each" in first.stdout, first.stdout + first.stderr[-3000:]
    second = _torchrun(2, "--checkpoint", ckpt)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    assert f"resumed on 2 ranks: {1001 - 3 * 6 * 32} of 1001 samples left" in second.stdout, second.stdout
    assert "epoch on 2 ranks:" in second.stdout and "match: yes" in second.stdout, second.stdout
