"""Make tests/ importable (toy_metrics) here and in the processes these tests spawn: spawned
processes start with the parent's sys.path."""
import os
import sys

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
