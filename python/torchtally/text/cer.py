"""``CharErrorRate`` (torchmetrics.text.cer's names). Character error rate."""

from .wer import ErrorRate

__all__ = ["CharErrorRate"]


class CharErrorRate(ErrorRate):
    """Character error rate: the character edit distance of each pair, summed, over the
    references' characters (spaces included). State: int64 ``errors`` and ``total``.

        >>> from torchtally.text import CharErrorRate
        >>> preds = ["this is the prediction", "there is an other sample"]
        >>> target = ["this is the reference", "there is another one"]
        >>> CharErrorRate().update(preds, target).compute()
        tensor(0.3415)
    """

    _unit = "chars"
