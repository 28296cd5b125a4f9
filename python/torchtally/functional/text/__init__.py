"""Text: the public functions (torchmetrics.functional.text's names and signatures).

One batch of sentences in, the metric out, computed from the same sums as the classes in
torchtally.text.
"""

from typing import List

from . import bleu, chrf
from .bleu import *  # noqa: F401,F403  (bleu_score, sacre_bleu_score)
from .chrf import *  # noqa: F401,F403  (chrf_score)

__all__: List[str] = [*bleu.__all__, *chrf.__all__]
