"""Curves and ranking (AUROC, average precision, ROC, precision-recall curves): the per-batch
state update in update.py, results from states in compute.py; the public functions are in
torchtally.functional.classification (precision_recall_curve.py, auroc.py, average_precision.py,
roc.py). Their readouts (EER, LogAUC, precision at fixed recall, ...): readouts.py, with the
public functions in torchtally.functional.classification (eer.py, logauc.py, ...).
"""
