"""BootStrapper: confidence intervals of any metric by the Poisson bootstrap, the same on any
number of ranks and any batch split when the samples' positions are given."""

import copy
import functools
import itertools
import warnings
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

import torch
from torch import Tensor
from torch.nn import ModuleList

from ..base.placement import argument_name
from ..errors import stacklevel_outside_torchtally
from ..sync import dist
from .abstract import WrapperMetric, check_wrapped, updating
from .poisson import poisson_weights

_INSTANCES = itertools.count()  # a number per BootStrapper made in this process (its stream)

_STRATEGIES = ("poisson", "multinomial")


def map_tensors(value: Any, fn: Callable[[Tensor], Tensor]) -> Any:
    """``value`` with ``fn`` applied to every tensor in it (tensors in lists, tuples and dicts too)."""
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, dict):
        return {k: map_tensors(v, fn) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(map_tensors(v, fn) for v in value)
    return value


def tensors_in(value: Any) -> List[Tensor]:
    found: List[Tensor] = []
    map_tensors(value, lambda t: found.append(t) or t)  # type: ignore[func-returns-value]
    return found


class BootStrapper(WrapperMetric):
    r"""Bootstrapped values of ``base_metric``: its mean, standard deviation, quantile or every
    copy's value over ``num_bootstraps`` resamplings of the data.

    Each copy of the metric sees every sample a random number of times. With
    ``sampling_strategy="poisson"`` (the default) that number is a Poisson(1) draw, independent per
    sample and copy: the *Poisson bootstrap*, which approximates the classic bootstrap (n draws with
    replacement) for large n without needing n up front, so it works on a stream of batches. The
    draw is not taken from a random generator but from a counter-based hash of (``seed``, the
    sample's position, the copy index): a sample gets the same weight in every copy whichever rank
    or batch it arrives in. Copies are updated with each sample repeated as often as its weight
    (``torch.repeat_interleave`` along dim 0 of every tensor argument), so any metric can be
    wrapped.

    Positions: pass ``update(preds, target, sample_index=idx)`` with each sample's index in the
    dataset (an int64 tensor of the batch's length; e.g. the indices a ``DistributedSampler``
    yields). Then the resampling, and so the interval, is identical on 1, 2 or any number of ranks
    and for any batching of the same data (exactly, for metrics with integer states; to float
    rounding for float sums). Without ``sample_index`` a sample's position is its running count on
    this rank (a state: a checkpoint resumes it), combined with the rank and with this object (the
    number of BootStrappers made before it in the process): the resampling is a valid bootstrap,
    but it then depends on how the data is split into ranks. To ``merge_state`` shards counted by
    different runs, pass ``sample_index``: without it their positions may coincide.

    Every copy's state is a state of this metric, so a sync sends all of them in the one packed
    sync of the wrapper (or of its MetricCollection): the same collectives as the bare metric.

    Args:
        base_metric: the metric to bootstrap (copied ``num_bootstraps`` times, as ``metrics``).
        num_bootstraps: number of copies.
        mean / std: return the mean / the standard deviation (Bessel-corrected) over the copies.
        quantile: return this quantile (a float or a tensor of them) of the copies' values.
        raw: return every copy's value, stacked.
        sampling_strategy: ``"poisson"`` (above) or ``"multinomial"`` (torchmetrics' other mode:
            each batch of n samples is replaced by n draws with replacement from that batch, with
            torch's random generator; the interval then depends on the batch split and on the
            ranks, so a warning says so, and ``sample_index`` is refused).
        seed: the hash's seed (keyword only): another seed, another resampling. It is an option of
            the metric, so ranks given different seeds raise SyncError.

    ``compute()`` returns a dict with the keys ``mean``, ``std``, ``quantile``, ``raw`` that were
    asked for.

    Differences from torchmetrics: the Poisson weights come from the hash above, not from torch's
    random generator (deterministic for a ``seed``; the same on every rank split when
    ``sample_index`` is given); ``forward`` keeps the accumulated state (torchmetrics' forward
    leaves only the last batch in the copies); ``num_bootstraps`` must be a positive int; a batch
    the wrapped metric would refuse is refused whole, also for a bad row that no copy resamples
    (torchmetrics checks only the resampled rows).

    Example:

        >>> import torch
        >>> from torchtally.regression import MeanSquaredError
        >>> from torchtally.wrappers import BootStrapper
        >>> boot = BootStrapper(MeanSquaredError(), num_bootstraps=20, quantile=torch.tensor([0.05, 0.95]))
        >>> preds, target = torch.linspace(0, 1, 100), torch.linspace(0, 1, 100) ** 2
        >>> for start in range(0, 100, 25):
        ...     _ = boot.update(preds[start:start + 25], target[start:start + 25],
        ...                     sample_index=torch.arange(start, start + 25))
        >>> result = boot.compute()
        >>> sorted(result)
        ['mean', 'quantile', 'std']
        >>> bool(result["quantile"][0] < result["mean"] < result["quantile"][1])
        True
    """

    def __init__(
        self,
        base_metric: Any,
        num_bootstraps: int = 10,
        mean: bool = True,
        std: bool = True,
        quantile: Optional[Union[float, Tensor]] = None,
        raw: bool = False,
        sampling_strategy: str = "poisson",
        *,
        seed: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_wrapped(
            base_metric,
            "base_metric",
            torchmetrics_says="Expected base metric to be an instance of torchmetrics.Metric but received",
        )
        if isinstance(num_bootstraps, bool) or not isinstance(num_bootstraps, int) or num_bootstraps < 1:
            raise ValueError(f"Expected argument `num_bootstraps` to be a positive int, got {num_bootstraps!r}")
        if sampling_strategy not in _STRATEGIES:
            raise ValueError(
                f"Expected argument ``sampling_strategy`` to be one of {_STRATEGIES} but received {sampling_strategy}"
            )
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"Expected argument `seed` to be an int, got {seed!r}")
        if sampling_strategy == "multinomial":
            warnings.warn(
                "BootStrapper(sampling_strategy='multinomial') resamples within each batch with torch's random "
                "generator: the interval depends on the batch split and on the number of ranks. Use 'poisson' "
                "with update(..., sample_index=...) for a resampling that does not.",
                UserWarning,
                stacklevel=stacklevel_outside_torchtally(),
            )
        copies = [copy.deepcopy(base_metric) for _ in range(num_bootstraps)]
        self.metrics = ModuleList(copies)
        self.num_bootstraps = num_bootstraps
        self.mean = mean
        self.std = std
        self.quantile = quantile
        self.raw = raw
        self.sampling_strategy = sampling_strategy
        self.seed = seed
        engines = [self.add_slot(f"b{b}", metric) for b, metric in enumerate(copies)]
        self._checker = engines[0]  # runs the wrapped metric's checks on rows no copy is given
        # this rank's running sample count, the positions without sample_index; "sum": after a
        # merge the count goes on past both shards' positions
        self.add_state("next_position", torch.tensor(0, dtype=torch.int64), reduce="sum")
        self._stream = (next(_INSTANCES) << 24) + 1  # plus the rank: this object's hash stream
        self._forward_start: Optional[int] = None

    if TYPE_CHECKING:  # a state declared with add_state
        next_position: Tensor

    def update(self, *args: Any, sample_index: Optional[Tensor] = None, **kwargs: Any) -> None:
        """Update every copy with its resampling of the batch (every tensor argument along dim 0).
        ``sample_index``: the samples' positions in the dataset (see the class docstring)."""
        n = _batch_size(args, kwargs, self.named_update(type(self).update))
        device = tensors_in((args, kwargs))[0].device
        if self.sampling_strategy == "multinomial":
            if sample_index is not None:
                raise ValueError(
                    "sample_index: the 'multinomial' strategy resamples within each batch and cannot use sample "
                    "positions; use sampling_strategy='poisson'"
                )
            picks = [torch.multinomial(torch.ones(n), num_samples=n, replacement=True) for _ in self.metrics]
            start = None
        else:
            start = self._forward_start if self._forward_start is not None else int(self.next_position)
            weights = self._weights(n, sample_index, start)
            rows = torch.arange(n)
            picks = [rows.repeat_interleave(w) for w in weights]

        self._check_rows_left_out(args, kwargs, picks, n)

        def steps() -> None:
            for b, pick in enumerate(picks):
                if pick.numel() == 0:
                    continue
                index = pick.to(device)
                chosen = map_tensors((args, kwargs), functools.partial(_rows, index=index))
                self.update_slot(f"b{b}", updating(*chosen[0], **chosen[1]))

        self.atomically(steps)
        if start is not None and sample_index is None:
            # an increment, not start + n: inside forward the batch's update starts from a reset
            # state (0) that forward then adds to the accumulated one
            self.next_position = self.next_position + n

    def _check_rows_left_out(self, args: Tuple[Any, ...], kwargs: Dict[str, Any], picks: List[Tensor], n: int) -> None:
        """The wrapped metric's own checks on the rows of the batch that no copy is given (weight 0
        in every copy), before any copy is updated: an update of those rows on fresh states, its
        result dropped. With the copies' updates every row then passes the checks the wrapped
        metric makes, so a NaN row is refused even where the resampling drops it everywhere, and
        the state is left unchanged. Rows, not the whole batch: a row is left out of every copy
        with probability about e^-num_bootstraps, so most batches cost nothing more, where a
        throwaway update of the whole batch would add one update to the num_bootstraps."""
        if n == 0:
            return
        given = torch.bincount(torch.cat(picks), minlength=n) if picks else torch.zeros(n, dtype=torch.int64)
        left_out = (given == 0).nonzero().squeeze(1)
        if left_out.numel() == 0:
            return
        index = left_out.to(tensors_in((args, kwargs))[0].device)
        rows = map_tensors((args, kwargs), functools.partial(_rows, index=index))
        counts = self._checker.counts()

        def check(batch: Tuple[Tuple[Any, ...], Dict[str, Any]]) -> None:
            self._checker.run(self.slot_values("b0", fresh=True), self.device, updating(*batch[0], **batch[1]))

        try:
            try:
                check(rows)
            except (TypeError, ValueError):
                check((args, kwargs))  # refused: the whole batch's error says where in the batch
                raise
        finally:
            self._checker.set_counts(counts)  # a check, not an update of copy 0

    def _weights(self, n: int, sample_index: Optional[Tensor], start: int) -> Tensor:
        if sample_index is None:
            stream = self._stream + dist.rank(self.process_group)
            positions = torch.arange(start, start + n, dtype=torch.int64)
            return poisson_weights(self.seed, stream, positions, self.num_bootstraps)
        if not isinstance(sample_index, Tensor):
            raise TypeError(
                f"sample_index: expected an int64 tensor of the samples' positions, got {type(sample_index).__name__}"
            )
        if sample_index.dtype.is_floating_point or sample_index.dtype.is_complex or sample_index.dtype == torch.bool:
            raise TypeError(f"sample_index: expected an integer tensor, got {sample_index.dtype}")
        if sample_index.shape != (n,):
            raise ValueError(
                f"sample_index: expected shape ({n},) (one position per sample), got {tuple(sample_index.shape)}"
            )
        positions = sample_index.detach().to("cpu", torch.int64)
        if n and int(positions.min()) < 0:
            raise ValueError(f"sample_index: positions must be >= 0, got {int(positions.min())}")
        return poisson_weights(self.seed, 0, positions, self.num_bootstraps)

    @torch.jit.unused
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The bootstrapped values on this batch, the batch accumulated too (one resampling for
        both, also where the metric is updated twice)."""
        self.__dict__["_forward_start"] = int(self.next_position)
        try:
            return super().forward(*args, **kwargs)
        finally:
            self.__dict__["_forward_start"] = None

    def compute(self) -> Dict[str, Tensor]:
        values = torch.stack([self.slot_value(f"b{b}") for b in range(self.num_bootstraps)], dim=0)
        out: Dict[str, Tensor] = {}
        if self.mean:
            out["mean"] = values.mean(dim=0)
        if self.std:
            out["std"] = values.std(dim=0)
        if self.quantile is not None:
            q = self.quantile if isinstance(self.quantile, Tensor) else torch.tensor(self.quantile)
            out["quantile"] = torch.quantile(values, q.to(values.device, values.dtype))
        if self.raw:
            out["raw"] = values
        return out


# index_select has no kernel for these: their rows are moved as the same bits of a signed dtype
_SIGNED_TWIN = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}


def _rows(t: Tensor, index: Tensor) -> Tensor:
    twin = _SIGNED_TWIN.get(t.dtype)
    if twin is not None:  # the wrapped metric decides whether it reads the dtype
        return t.view(twin).index_select(0, index.to(t.device)).view(t.dtype)
    return t.index_select(0, index.to(t.device))


def _batch_size(args: Tuple[Any, ...], kwargs: Dict[str, Any], named: Callable[..., Any]) -> int:
    """The batch length (dim 0 of the first tensor); every tensor argument must share it
    (``named``: the update whose parameters name the arguments in errors)."""
    tensors = tensors_in((args, kwargs))
    if not tensors:
        raise ValueError("None of the input contained tensors, so could not determine the sampling size")
    for t in tensors:
        if t.dim() == 0:
            raise ValueError(
                f"{argument_name(named, args, kwargs, t)}: BootStrapper.update needs a batch dim 0 to resample "
                "along; got a 0-d tensor"
            )
    n = tensors[0].shape[0]
    for t in tensors[1:]:
        if t.shape[0] != n:
            raise ValueError(
                f"{argument_name(named, args, kwargs, t)}: BootStrapper.update: every tensor argument must have "
                f"the same length along dim 0 (it resamples rows): expected {n} rows (as "
                f"{argument_name(named, args, kwargs, tensors[0])}), got shape {tuple(t.shape)}"
            )
    return n
