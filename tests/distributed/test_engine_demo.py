"""`make demo`'s script under torchrun (2 gloo processes): it must report a match every epoch."""

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.distributed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_demo_matches_the_single_process_values():
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--standalone", "examples/demo.py"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert out.count("match: yes") == 3, out
    assert "identical on all 2 ranks: yes" in out and "ALL MATCH" in out, out
    assert "real samples per rank: [501, 500]" in out, out  # the validation set really is padded
