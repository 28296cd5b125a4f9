"""``MatchErrorRate`` (torchmetrics.text.mer's names). Match error rate."""

from .wer import ErrorRate

__all__ = ["MatchErrorRate"]


class MatchErrorRate(ErrorRate):
    """Match error rate: the word edit distance of each pair, summed, over the sum of each
    pair's longer side (torchmetrics' definition). State: int64 ``errors`` and ``total``.

        >>> from torchtally.text import MatchErrorRate
        >>> preds = ["this is the prediction", "there is an other sample"]
        >>> target = ["this is the reference", "there is another one"]
        >>> MatchErrorRate().update(preds, target).compute()
        tensor(0.4444)
    """

    _longer = True
