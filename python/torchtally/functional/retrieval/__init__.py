"""Retrieval: the public functions (torchmetrics.functional.retrieval's names and signatures).

Each takes one query's scores and relevances and returns its value, computed by the same per-query
scorers as the classes in torchtally.retrieval.
"""

from typing import List

__all__: List[str] = []
