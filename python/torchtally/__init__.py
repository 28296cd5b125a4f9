"""torchtally: exact, cheap evaluation metrics for distributed PyTorch.

A C core accumulates metric state straight from model outputs; a small Python layer declares
that state, syncs it across ranks in a few packed collectives and hooks into training engines.
"""

__version__ = "0.1.0"
