"""benchmarks/gpu_catalogue_syncs.py, which a lent GPU runs to say which updates still wait for
the host, keeps working where no GPU is: its CPU run walks every class of the catalogue and
every update runs (a class it could not update would be a row of the report's errors)."""

import subprocess
import sys
from pathlib import Path

from support.metric_catalogue import METRICS

ROOT = Path(__file__).resolve().parents[2]


def test_the_report_updates_every_class_of_the_catalogue(tmp_path):
    out = tmp_path / "syncs.md"
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gpu_catalogue_syncs.py"), "--device", "cpu", "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    text = out.read_text()
    assert (
        f"{len(METRICS)} classes: **{len(METRICS)} update without a host synchronisation**, 0 synchronise, 0 raised"
        in text
    )
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| class")]
    assert sorted(r.split(" | ")[0][2:] for r in rows) == sorted(e.name for e in METRICS)
