"""torchmetrics.text's place: ``from torchtally.text import WordErrorRate``."""

from types import ModuleType
from typing import Tuple

from .metrics import bertscore, infolm, ngram, perplexity, rouge, squad, text_edit, text_ter
from .text.bert import *  # noqa: F401,F403  (BERTScore)
from .text.infolm import *  # noqa: F401,F403  (InfoLM)
from .text.bleu import *  # noqa: F401,F403  (BLEUScore, SacreBLEUScore, CHRFScore)
from .text.perplexity import *  # noqa: F401,F403  (Perplexity)
from .text.rouge import *  # noqa: F401,F403  (ROUGEScore)
from .text.squad import *  # noqa: F401,F403  (SQuAD)
from .text.wer import *  # noqa: F401,F403  (WER, CER, MER, WIL, WIP, EditDistance)
from .text.ter import *  # noqa: F401,F403  (TranslationEditRate, ExtendedEditDistance)

_MODULES: Tuple[ModuleType, ...] = (text_edit, ngram, text_ter, rouge, squad, perplexity, bertscore, infolm)

__all__ = [name for module in _MODULES for name in module.__all__]
