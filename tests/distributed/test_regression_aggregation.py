"""Every regression and aggregation case of the shared tester (support/regression_cases.py and
support/aggregation_cases.py, run in one process by tests/regression/test_mse.py and
tests/aggregation/test_aggregation.py) across 3 gloo ranks with uneven shards (one layout with an
empty middle rank), in ONE spawned run."""

import pytest
from support import aggregation_cases, regression_cases
from support.metric_tester import run_distributed_cases

pytestmark = pytest.mark.distributed


def test_all_cases_on_three_ranks():
    run_distributed_cases(regression_cases.CASES + aggregation_cases.CASES, world_size=3)
