"""torchtally has no Avalanche dependency: the core never imports it, and importing the adapter
without Avalanche fails with an ImportError that says how to install it (the adapter itself is
tested against Avalanche in tests/with_avalanche, in its own environment)."""

import importlib
import subprocess
import sys

import pytest


def test_the_adapter_without_avalanche_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "avalanche", None)  # as if not installed
    for name in [n for n in sys.modules if n.startswith("torchtally.adapters.avalanche")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ImportError, match=r"pip install avalanche-lib==0\.6\.0"):
        importlib.import_module("torchtally.adapters.avalanche")


def test_importing_torchtally_imports_no_avalanche():
    code = (
        "import sys, torchtally, torchtally.adapters.hook, torchtally.adapters; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'avalanche'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
