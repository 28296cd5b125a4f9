"""Curves and ranking (AUROC, average precision, ROC, precision-recall curves): the public
functions in forms.py; the per-batch state update in update.py, results from states in compute.py.
Their readouts (EER, LogAUC, precision at fixed recall, ...): readouts.py, with the public
functions in readout_forms.py and readout_task_forms.py.
"""
