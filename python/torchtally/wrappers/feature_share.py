"""FeatureShare: metrics that run one feature network, sharing it and its outputs."""

from functools import lru_cache
from typing import Any, Dict, Optional, Sequence, Union

import torch
from torch.nn import Module

from ..base.collection import MetricCollection
from ..base.metric import Metric
from .abstract import warn_user


class NetworkCache(Module):
    """A network whose outputs are cached per input (``functools.lru_cache`` on its forward, at
    most ``max_size`` entries): metrics calling it on the same batch run it once."""

    # torch.jit.script leaves the cached network out (its forward is a Python cache, not scriptable)
    __jit_ignored_attributes__ = ["network"]

    def __init__(self, network: Module, max_size: int = 100) -> None:
        super().__init__()
        self.max_size = max_size
        self.network = network
        self.network.forward = lru_cache(maxsize=self.max_size)(network.forward)

    @torch.jit.unused
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.network(*args, **kwargs)


class FeatureShare(MetricCollection):
    """A MetricCollection of metrics that extract features with the same network: each metric
    names the attribute holding its network in a ``feature_network`` attribute (a str); the first
    metric's network, wrapped in a NetworkCache, replaces every metric's, so it is held once and
    runs once per batch. A metric whose network differs from the first one's (by its printout)
    gets a warning. The network is yours: nothing is downloaded. FrechetInceptionDistance,
    KernelInceptionDistance, MemorizationInformedFrechetInceptionDistance and InceptionScore
    name theirs ``"inception"`` (torchmetrics' name), so
    ``FeatureShare([FrechetInceptionDistance(feature=net), KernelInceptionDistance(feature=net)])``
    runs ``net`` once per batch (the cache is keyed by the batch tensor: with the built-in
    extractor and ``normalize=True`` each metric converts the images itself, and each converted
    copy runs the network, as in torchmetrics).

    Args:
        metrics: a metric, a list of metrics or a dict of them (as MetricCollection).
        max_cache_size: how many inputs the cache keeps (default: the number of metrics).

    The metrics sync as any collection's: one packed sync (``compute_groups=False``).

    Example:

        >>> import torch
        >>> from torchtally import Metric
        >>> from torchtally.wrappers import FeatureShare
        >>> class FeatureMean(Metric):
        ...     feature_network = "net"
        ...     def __init__(self, net):
        ...         super().__init__()
        ...         self.net = net
        ...         self.add_state("total", torch.zeros((), dtype=torch.float64), reduce="sum")
        ...     def update(self, x):
        ...         self.total = self.total + self.net(x).sum()
        ...     def compute(self):
        ...         return self.total
        >>> net = torch.nn.Linear(2, 1)
        >>> torch.nn.init.ones_(net.weight); torch.nn.init.zeros_(net.bias)  # doctest: +ELLIPSIS
        Parameter...
        >>> shared = FeatureShare({"a": FeatureMean(net), "b": FeatureMean(net)})
        >>> with torch.no_grad():
        ...     shared(torch.ones(3, 2))
        {'a': tensor(6., dtype=torch.float64), 'b': tensor(6., dtype=torch.float64)}
    """

    def __init__(
        self, metrics: Union[Metric, Sequence[Metric], Dict[str, Metric]], max_cache_size: Optional[int] = None
    ) -> None:
        super().__init__(metrics, compute_groups=False)
        if max_cache_size is None:
            max_cache_size = len(self)
        if isinstance(max_cache_size, bool) or not isinstance(max_cache_size, int):
            raise TypeError(f"max_cache_size should be an integer, but got {max_cache_size}")
        first = next(iter(self.values()))
        name = getattr(first, "feature_network", None)
        if name is None:
            raise AttributeError(
                "Tried to extract the network to share from the first metric, but it did not have a `feature_network`"
                " attribute. Please make sure that the metric has an attribute with that name,"
                " else it cannot be shared."
            )
        if not isinstance(name, str):
            raise TypeError("The `feature_network` attribute must be a string representing the network name.")
        network = getattr(first, name)
        cached = NetworkCache(network, max_size=max_cache_size)
        for key, metric in self.items():
            attribute = getattr(metric, "feature_network", None)
            if attribute is None:
                raise AttributeError(
                    "Tried to set the cached network to all metrics, but one of the metrics did not have a"
                    " `feature_network` attribute. Please make sure that all metrics have a attribute with that name,"
                    f" else it cannot be shared. Failed on metric {key}."
                )
            if not isinstance(attribute, str):
                raise TypeError(f"Metric {key}'s `feature_network` attribute must be a string.")
            if str(getattr(metric, attribute)) != str(network):
                warn_user(
                    "The network to share between the metrics is not the same for all metrics."
                    f" Metric {key} has a different network than the first metric."
                    " This may lead to unexpected behavior."
                )
            setattr(metric, attribute, cached)
