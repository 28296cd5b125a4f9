"""Metric classes, one file per shared state (names and options follow torchmetrics; the public
faces are torchtally.classification, torchtally.regression and torchtally.aggregation).

Every class here checks a batch completely before its state changes: a refused update (a
TypeError or ValueError naming the argument) leaves the state exactly as it was, and no
class keeps a reference to an input tensor (a caller may refill one buffer for every batch).
Unsupported dtypes (float8, uint16-uint64, complex, where a class does not read them) raise
TypeError; meta tensors, which hold no values to count, raise ValueError (torchmetrics fails
on some and returns a number from nothing for others, e.g. MeanSquaredError's 0).
``load_state_dict`` checks what it loads the same way (see ``Metric.check_state_invariants``).
"""
