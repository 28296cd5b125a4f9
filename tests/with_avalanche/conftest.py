"""tests/with_avalanche/ runs in the Avalanche environment (`make avalanche-venv`, .venv-avalanche):
the adapter's tests against the real Avalanche 0.6.0. The main suite ignores this folder when
Avalanche is not importable (tests/conftest.py); `make test` runs it here afterwards."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:  # spawned ranks import the test modules by name
    sys.path.insert(0, HERE)
