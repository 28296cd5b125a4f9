"""Every regression and aggregation case of test_regression.py / test_aggregation.py across 3
gloo ranks with uneven shards (one layout with an empty middle rank), in ONE spawned run."""
import pytest

import test_aggregation
import test_regression
from metric_tester import run_distributed_cases

pytestmark = pytest.mark.distributed


def test_all_cases_on_three_ranks():
    run_distributed_cases(test_regression.CASES + test_aggregation.CASES, world_size=3)
