"""Every test starts from the same random state, so a test that draws its data without a seed
still sees the same data on every run: a rare draw (one class only, no bad label where one was
meant) cannot make CI fail once in a few hundred runs.

Every process a test starts exchanges sync headers by all_to_all, whatever the machine's cores
(torchtally.sync.exchange would take its ring where a host has fewer cores than ranks, as the
2-core CI machine has at world size 3 and 4), so collective counts mean the same everywhere;
tests/distributed/test_sync_small.py runs the ring, and the automatic choice, on purpose."""

import importlib.util
import os
import random

import numpy as np
import pytest
import torch

# tests/with_avalanche/ needs Avalanche and tests/with_torchvision/ torchvision (the peers'
# detection metrics), which live in their own environment (.venv-avalanche: `make test` runs those
# folders there, after this suite). Where they are missing the folders are not collected, so they
# are never counted as skipped-and-passing here.
collect_ignore = [
    folder
    for folder, package in (("with_avalanche", "avalanche"), ("with_torchvision", "torchvision"))
    if importlib.util.find_spec(package) is None
]

os.environ.setdefault("TORCHTALLY_HEADER_EXCHANGE", "all_to_all")  # inherited by spawned ranks


@pytest.fixture(autouse=True)
def _same_random_state_every_run():
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)


@pytest.fixture
def one_intra_op_thread():
    """For tests on images of a few hundred pixels: intra-op threads only wait on each other
    there (10x slower on a busy 2-core machine), so the test runs on one, as the ranks of the
    distributed checks do. ``pytestmark = pytest.mark.usefixtures("one_intra_op_thread")``."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def lazy_device():
    """torch's lazy device: a second device that holds data, on CPU-only torch. Its backend can
    be initialised once per process, so every test that needs it shares this fixture."""
    try:
        import torch._lazy.ts_backend

        torch._lazy.ts_backend.init()
        return torch.ones(1, device="lazy").device
    except Exception as exc:  # pragma: no cover - a torch without the lazy TorchScript backend
        pytest.skip(f"torch's lazy device is unavailable here: {exc}")
