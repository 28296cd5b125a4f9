"""``WordInfoLost`` (torchmetrics.text.wil's names). Word information lost."""

from torch import Tensor

from ..functional.text import error_rates as edit_compute
from .wer import WordInfo

__all__ = ["WordInfoLost"]


class WordInfoLost(WordInfo):
    """Word information lost: 1 - H^2 / (reference words x predicted words), H the sum over
    pairs of (the longer side's words - the edit distance), torchmetrics' definition. State:
    int64 ``errors`` (-H), ``target_total``, ``preds_total``.

        >>> from torchtally.text import WordInfoLost
        >>> preds = ["this is the prediction", "there is an other sample"]
        >>> target = ["this is the reference", "there is another one"]
        >>> WordInfoLost().update(preds, target).compute()
        tensor(0.6528)
    """

    higher_is_better = False

    def compute(self) -> Tensor:
        return edit_compute.word_info_lost(*self._sums(), self.dtype)
