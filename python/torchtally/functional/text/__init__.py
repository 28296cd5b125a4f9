"""Text: the public functions (torchmetrics.functional.text's names and signatures).

One batch of sentences in, the metric out, computed from the same sums as the classes in
torchtally.text.
"""

from typing import List

__all__: List[str] = []
