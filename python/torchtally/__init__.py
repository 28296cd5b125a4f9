"""torchtally: exact, cheap evaluation metrics for distributed PyTorch.

A C core accumulates metric state straight from model outputs; a small Python layer declares
that state, syncs it across ranks in a few packed collectives and hooks into training engines.
"""

__version__ = "0.1.0"

from . import aggregation, classification, detection, functional, regression, retrieval, segmentation, text, wrappers  # noqa: E402
from .adapters.hook import MetricHook
from .adapters.sampler import UnpaddedDistributedSampler
from .aggregation import *  # noqa: F401,F403,E402
from .base.collection import MetricCollection
from .base.metric import Metric
from .classification import *  # noqa: F401,F403,E402  (classification metrics, curves and ranking)
from .decorators import all_reduced_synchronized, reinit__is_reduced, sync_all_reduce
from .detection import PanopticQuality  # torchmetrics' top level has it too
from .errors import NotComputableError, SyncError
from .kernels import cuda_checks, set_cuda_checks  # when a batch rejected on the GPU raises
from .regression import *  # noqa: F401,F403,E402


def cuda_status(devices=None):  # devices: as torchtally.cuda.status takes them
    """Per CUDA device, whether torchtally's CUDA kernels serve it, and if not why: see
    torchtally.cuda.status (imported here on call, so that `python -m torchtally.cuda` runs the
    module fresh)."""
    from .cuda import status

    return status(devices)
