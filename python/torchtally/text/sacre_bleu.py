"""``SacreBLEUScore`` (torchmetrics.text.sacre_bleu's names). BLEU as SacreBLEU computes it
(torchmetrics' SacreBLEUScore)."""

from typing import Any, Optional, Sequence

from ..functional.text import tokenizers
from .bleu import BLEUScore

__all__ = ["SacreBLEUScore"]


class SacreBLEUScore(BLEUScore):
    """BLEU as SacreBLEU computes it (torchmetrics' SacreBLEUScore): lines tokenised by
    ``tokenize`` ('13a' (default), 'zh', 'intl', 'char', 'none', 'ja-mecab', 'ko-mecab',
    'flores101', 'flores200'; those needing packages that are not installed raise
    ModuleNotFoundError saying what to install), lowercased after tokenising when ``lowercase``.
    References grouped per hypothesis, as torchmetrics.

    State: as BLEUScore.

        >>> from torchtally.text import SacreBLEUScore
        >>> preds = ['the cat is on the mat']
        >>> target = [['there is a cat on the mat', 'a cat is on the mat']]
        >>> SacreBLEUScore().update(preds, target).compute()
        tensor(0.7598)
    """

    def __init__(
        self,
        n_gram: int = 4,
        smooth: bool = False,
        tokenize: str = "13a",
        lowercase: bool = False,
        weights: Optional[Sequence[float]] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(n_gram=n_gram, smooth=smooth, weights=weights, **kwargs)
        self._tokenize = tokenizers.check_tokenize(tokenize)
        self._lowercase = bool(lowercase)
        self.tokenize, self.lowercase = tokenize, bool(lowercase)
