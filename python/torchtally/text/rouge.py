"""ROUGEScore: state declarations; the math lives in torchtally.functional.text.summary_overlap.

State: ``rouge_sums`` float64 [K, 3], per key in ``rouge_keys`` the sums over predictions of
(fmeasure, precision, recall), and ``num_samples`` int64; both sum-reduced (24 K + 8 bytes in
all, whatever the number of samples; torchmetrics keeps a list of three float32 tensors per
sample and key, gathered at every sync). Results are in ``self.dtype`` (float32 by default).

Deliberate differences from torchmetrics:

* float64 sums (torchmetrics: the mean of float32 values);
* ``rougeLsum`` splits sentences with nltk's punkt model as torchmetrics does, but never
  downloads it: without its data an update raises OSError saying how to install it
  (``nltk.download('punkt_tab')``) or to leave ``rougeLsum`` out of ``rouge_keys``;
* preds and target of different lengths (torchmetrics drops the extra ones) and a prediction
  without a reference raise ValueError, with the state unchanged.
"""

from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

from ..base.metric import Metric
from ..base.state_dict import check_nonnegative
from ..functional.text import rouge as rouge_fn
from ..functional.text import summary_overlap as ru

__all__ = ["ROUGEScore"]


class ROUGEScore(Metric):
    """ROUGE for summaries (rouge-score's definitions, torchmetrics' interface): per key of
    ``rouge_keys`` (rouge1..rouge9, rougeL, rougeLsum) the mean over predictions of fmeasure,
    precision and recall. ``update(preds, target)``: preds a string or a list of strings;
    target a string, a list of strings or a list of lists of references per prediction; with
    several references ``accumulate`` keeps the best fmeasure ("best") or the mean ("avg").

    Differences from torchmetrics: see the module docstring (float64 sums; rougeLsum never
    downloads nltk's punkt; mismatched lengths raise).

        >>> from torchtally.text import ROUGEScore
        >>> m = ROUGEScore(rouge_keys=("rouge1", "rouge2", "rougeL"))
        >>> scores = m.update(["My name is John"], [["Is your name John"]]).compute()
        >>> {k: round(float(v), 4) for k, v in scores.items()}  # doctest: +NORMALIZE_WHITESPACE
        {'rouge1_fmeasure': 0.75, 'rouge1_precision': 0.75, 'rouge1_recall': 0.75,
         'rouge2_fmeasure': 0.0, 'rouge2_precision': 0.0, 'rouge2_recall': 0.0,
         'rougeL_fmeasure': 0.5, 'rougeL_precision': 0.5, 'rougeL_recall': 0.5}
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    traceable_update = False  # strings: eager inside torch.compile
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    if TYPE_CHECKING:  # declared states, read as attributes
        rouge_sums: Tensor
        num_samples: Tensor

    def __init__(
        self,
        use_stemmer: bool = False,
        normalizer: Optional[Callable[[str], str]] = None,
        tokenizer: Optional[Callable[[str], Sequence[str]]] = None,
        accumulate: str = "best",
        rouge_keys: Union[str, Tuple[str, ...]] = ("rouge1", "rouge2", "rougeL", "rougeLsum"),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.rouge_keys = ru.check_rouge_keys(rouge_keys)
        self.accumulate = ru.check_accumulate(accumulate)
        self.use_stemmer = bool(use_stemmer)
        ru.make_stemmer(self.use_stemmer)  # nltk missing: an error now, as torchmetrics
        self.normalizer = normalizer
        self.tokenizer = tokenizer
        self.add_state("rouge_sums", torch.zeros(len(self.rouge_keys), 3, dtype=torch.float64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(
        self, preds: Union[str, Sequence[str]], target: Union[str, Sequence[str], Sequence[Sequence[str]]]
    ) -> None:
        preds_list, refs = ru.as_pairs(preds, target)
        stem = ru.make_stemmer(self.use_stemmer)
        sums = ru.rouge_batch_sums(
            preds_list, refs, self.rouge_keys, self.accumulate, stem, self.normalizer, self.tokenizer
        )
        self.rouge_sums += sums.to(self.rouge_sums.device)
        self.num_samples += len(preds_list)

    def compute(self) -> Dict[str, Tensor]:
        return rouge_fn.rouge_result(self.rouge_sums, self.num_samples, self.rouge_keys, self.dtype)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "rouge_sums", "num_samples")
