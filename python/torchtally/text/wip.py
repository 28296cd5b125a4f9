"""``WordInfoPreserved`` (torchmetrics.text.wip's names). Word information preserved."""

from torch import Tensor

from ..functional.text import error_rates as edit_compute
from .wer import WordInfo

__all__ = ["WordInfoPreserved"]


class WordInfoPreserved(WordInfo):
    """Word information preserved: H^2 / (reference words x predicted words), H as in
    WordInfoLost. State: int64 ``errors`` (-H), ``target_total``, ``preds_total``.

        >>> from torchtally.text import WordInfoPreserved
        >>> preds = ["this is the prediction", "there is an other sample"]
        >>> target = ["this is the reference", "there is another one"]
        >>> WordInfoPreserved().update(preds, target).compute()
        tensor(0.3472)
    """

    higher_is_better = True

    def compute(self) -> Tensor:
        return edit_compute.word_info_preserved(*self._sums(), self.dtype)
