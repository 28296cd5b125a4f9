"""Text: the public functions (torchmetrics.functional.text's names and signatures).

One batch of sentences in, the metric out, computed from the same sums as the classes in
torchtally.text.
"""

from . import bert
from . import infolm as infolm_forms
from .bert import *  # noqa: F401,F403
from .infolm import *  # noqa: F401,F403

__all__ = list(bert.__all__) + list(infolm_forms.__all__)
