"""``BinaryDice``, ``MulticlassDice``, ``MultilabelDice`` (torchmetrics.classification.dice's
names). Dice coefficient 2 tp / (2 tp + fp + fn), which is the F1 score (same options, same
value)."""

from .f_beta import BinaryF1Score, MulticlassF1Score, MultilabelF1Score

__all__ = ["BinaryDice", "MulticlassDice", "MultilabelDice"]


class BinaryDice(BinaryF1Score):
    """Dice coefficient 2 tp / (2 tp + fp + fn), which is the F1 score (same options, same value).
    torchtally's own name: torchmetrics 1.9 has no classification Dice.

    >>> import torch
    >>> from torchtally.classification import BinaryDice
    >>> preds, target = torch.tensor([0.9, 0.2, 0.7, 0.4]), torch.tensor([1, 0, 0, 1])
    >>> BinaryDice().update(preds, target).compute()
    tensor(0.5000)
    """


class MulticlassDice(MulticlassF1Score):
    """Dice coefficient per class (= F1), averaged as MulticlassPrecision. torchtally's own name.

    >>> import torch
    >>> from torchtally.classification import MulticlassDice
    >>> MulticlassDice(3, average="micro").update(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])).compute()
    tensor(0.7500)
    """


class MultilabelDice(MultilabelF1Score):
    """Dice coefficient per label (= F1), averaged over labels. torchtally's own name.

    >>> import torch
    >>> from torchtally.classification import MultilabelDice
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelDice(num_labels=3).update(preds, target).compute()
    tensor(0.6667)
    """
