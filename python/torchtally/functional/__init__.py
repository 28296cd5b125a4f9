"""Functional metrics, torchmetrics' names and signatures: one batch in, the metric out.

``torchtally.functional.classification`` (counts, curves and ranking),
``torchtally.functional.regression``, ``torchtally.functional.aggregation``,
``torchtally.functional.audio`` (the signal metrics),
``torchtally.functional.detection``, ``torchtally.functional.segmentation``,
``torchtally.functional.retrieval``, ``torchtally.functional.text``,
``torchtally.functional.image``, ``torchtally.functional.nominal``, ``torchtally.functional.shape`` and
``torchtally.functional.multimodal``; every name is
also importable from here. The kernels behind them are routed in `torchtally.kernels` (C core or torch
reference).
"""

from .aggregation import *  # noqa: F401,F403
from .audio import *  # noqa: F401,F403
from .classification import *  # noqa: F401,F403
from .detection import *  # noqa: F401,F403
from .image import *  # noqa: F401,F403
from .multimodal import *  # noqa: F401,F403
from .nominal import *  # noqa: F401,F403
from .regression import *  # noqa: F401,F403
from .retrieval import *  # noqa: F401,F403
from .segmentation import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .text import *  # noqa: F401,F403
