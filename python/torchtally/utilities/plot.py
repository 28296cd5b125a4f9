"""The type aliases torchmetrics.utilities.plot gives a metric's ``plot`` signature.

Differs from torchmetrics: both are ``Any`` here, so that defining a metric never imports
matplotlib (torchmetrics names matplotlib's Axes and Figure when matplotlib is installed). The
drawing itself is ``Metric._plot`` / ``Metric.plot`` (torchtally.base.plotting).
"""

from typing import Any, Tuple

_AX_TYPE = Any  # a matplotlib Axes
_PLOT_OUT_TYPE = Tuple[Any, Any]  # (figure, axes)
