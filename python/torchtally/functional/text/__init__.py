"""Text: the public functions (torchmetrics.functional.text's names and signatures).

One batch of sentences in, the metric out, computed from the same sums as the classes in
torchtally.text. Edit-distance metrics: wer.py, cer.py, mer.py, wil.py, wip.py, edit.py (per-batch work
in error_counts.py, results in error_rates.py).
"""

from .bert import bert_score
from .bleu import bleu_score
from .cer import char_error_rate
from .chrf import chrf_score
from .edit import edit_distance
from .eed import extended_edit_distance
from .infolm import infolm
from .mer import match_error_rate
from .perplexity import perplexity
from .rouge import rouge_score
from .sacre_bleu import sacre_bleu_score
from .squad import squad
from .ter import translation_edit_rate
from .wer import word_error_rate
from .wil import word_information_lost
from .wip import word_information_preserved

__all__ = [
    "bert_score",
    "bleu_score",
    "char_error_rate",
    "chrf_score",
    "edit_distance",
    "extended_edit_distance",
    "infolm",
    "match_error_rate",
    "perplexity",
    "rouge_score",
    "sacre_bleu_score",
    "squad",
    "translation_edit_rate",
    "word_error_rate",
    "word_information_lost",
    "word_information_preserved",
]
