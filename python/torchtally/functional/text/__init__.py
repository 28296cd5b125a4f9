"""Text: the public functions (torchmetrics.functional.text's names and signatures).

One batch of sentences in, the metric out, computed from the same sums as the classes in
torchtally.text.
"""

from typing import List

from .perplexity_form import perplexity
from .rouge_form import rouge_score
from .squad_form import squad

__all__: List[str] = ["perplexity", "rouge_score", "squad"]
