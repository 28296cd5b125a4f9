"""examples/avalanche_ddp.py runs and finds torchtally's accuracy equal to scikit-learn's on every
experience. In one process here (its 2-process run is `make avalanche-demo`; the 2- and
3-process behaviour is what test_seed.py checks)."""

import os
import subprocess
import sys

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "avalanche_ddp.py")


def test_the_example_runs_and_matches_scikit_learn():
    done = subprocess.run([sys.executable, EXAMPLE], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "torchtally equals scikit-learn on every experience: yes" in done.stdout
    assert done.stdout.count("after training on experience") == 3
