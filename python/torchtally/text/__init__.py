"""torchmetrics.text's place: ``from torchtally.text import WordErrorRate``."""

from .bert import BERTScore
from .bleu import BLEUScore
from .cer import CharErrorRate
from .chrf import CHRFScore
from .edit import EditDistance
from .eed import ExtendedEditDistance
from .infolm import InfoLM
from .mer import MatchErrorRate
from .perplexity import Perplexity
from .rouge import ROUGEScore
from .sacre_bleu import SacreBLEUScore
from .squad import SQuAD
from .ter import TranslationEditRate
from .wer import WordErrorRate
from .wil import WordInfoLost
from .wip import WordInfoPreserved

__all__ = [
    "BERTScore",
    "BLEUScore",
    "CharErrorRate",
    "CHRFScore",
    "EditDistance",
    "ExtendedEditDistance",
    "InfoLM",
    "MatchErrorRate",
    "Perplexity",
    "ROUGEScore",
    "SacreBLEUScore",
    "SQuAD",
    "TranslationEditRate",
    "WordErrorRate",
    "WordInfoLost",
    "WordInfoPreserved",
]
