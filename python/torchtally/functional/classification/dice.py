"""``binary_dice``, ``multiclass_dice``, ``multilabel_dice``, at torchmetrics' path
torchmetrics.functional.classification.dice."""

from .f_beta import binary_f1_score, multiclass_f1_score, multilabel_f1_score

__all__ = ["binary_dice", "multiclass_dice", "multilabel_dice"]


# Dice = 2 tp / (2 tp + fp + fn): the F1 score under another name (torchtally's; torchmetrics 1.9
# has no classification dice).
binary_dice = binary_f1_score


multiclass_dice = multiclass_f1_score


multilabel_dice = multilabel_f1_score
