"""torchmetrics.text's place: ``from torchtally.text import WordErrorRate``."""

from types import ModuleType
from typing import Tuple

from .metrics import bertscore, infolm, ngram, perplexity, rouge, squad, text_edit, text_ter
from .metrics.bertscore import *  # noqa: F401,F403  (BERTScore)
from .metrics.infolm import *  # noqa: F401,F403  (InfoLM)
from .metrics.ngram import *  # noqa: F401,F403  (BLEUScore, SacreBLEUScore, CHRFScore)
from .metrics.perplexity import *  # noqa: F401,F403  (Perplexity)
from .metrics.rouge import *  # noqa: F401,F403  (ROUGEScore)
from .metrics.squad import *  # noqa: F401,F403  (SQuAD)
from .metrics.text_edit import *  # noqa: F401,F403  (WER, CER, MER, WIL, WIP, EditDistance)
from .metrics.text_ter import *  # noqa: F401,F403  (TranslationEditRate, ExtendedEditDistance)

_MODULES: Tuple[ModuleType, ...] = (text_edit, ngram, text_ter, rouge, squad, perplexity, bertscore, infolm)

__all__ = [name for module in _MODULES for name in module.__all__]
