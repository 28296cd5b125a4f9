"""Text: the public functions (torchmetrics.functional.text's names and signatures).

One batch of sentences in, the metric out, computed from the same sums as the classes in
torchtally.text.
"""

from typing import List

from .eed import extended_edit_distance
from .ter import translation_edit_rate

__all__: List[str] = ["extended_edit_distance", "translation_edit_rate"]
