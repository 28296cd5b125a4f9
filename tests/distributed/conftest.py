"""Make tests/ importable here and in the processes these tests spawn, so that the shared helpers
import as ``support.<module>`` (support.toy_metrics, support.metric_tester,
support.engine_helpers, ...) also when tests/distributed runs alone: spawned processes start
with the parent's sys.path, so what is pickled to them by those names resolves there too."""

import os
import sys

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
