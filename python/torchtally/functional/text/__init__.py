"""Text: the public functions (torchmetrics.functional.text's names and signatures).

One batch of sentences in, the metric out, computed from the same sums as the classes in
torchtally.text. Edit-distance metrics: edit_forms.py (per-batch work in edit_update.py, results in
edit_compute.py).
"""

from typing import List

from . import bert, bleu, chrf
from . import wer as edit_forms
from . import infolm as infolm_forms  # the module, beside its function infolm
from .bert import *  # noqa: F401,F403  (bert_score)
from .bleu import *  # noqa: F401,F403  (bleu_score, sacre_bleu_score)
from .chrf import *  # noqa: F401,F403  (chrf_score)
from .wer import *  # noqa: F401,F403
from .eed import extended_edit_distance
from .infolm import *  # noqa: F401,F403  (infolm)
from .perplexity import perplexity
from .rouge import rouge_score
from .squad import squad
from .ter import translation_edit_rate

__all__: List[str] = [
    *edit_forms.__all__,
    *bleu.__all__,
    *chrf.__all__,
    "extended_edit_distance",
    "translation_edit_rate",
    "perplexity",
    "rouge_score",
    "squad",
    *bert.__all__,
    *infolm_forms.__all__,
]
