"""MetricCollection's keys: the mapping protocol over its metrics, and results renamed as the
user sees them (prefix, postfix, dict results flattened). A mixin of MetricCollection."""
from typing import Any, Dict, Iterable, Iterator, Tuple

from .metric import Metric


class CollectionKeys:

    def __getitem__(self, key: str, copy_state: bool = True) -> Metric:
        if self.prefix and key.startswith(self.prefix):
            key = key[len(self.prefix):]
        if self.postfix and key.endswith(self.postfix):
            key = key[: len(key) - len(self.postfix)]
        return self._metrics[key]

    def __contains__(self, key: object) -> bool:
        return key in self._metrics

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._metrics)

    def keys(self, keep_base: bool = False) -> Iterable[str]:
        """The metric keys; with prefix and postfix unless ``keep_base``."""
        if keep_base or (not self.prefix and not self.postfix):
            return self._metrics.keys()
        return [self._set_name(k) for k in self._metrics]

    def items(self, keep_base: bool = False, copy_state: bool = True) -> Iterable[Tuple[str, Metric]]:
        """(key, metric) pairs. Shared states stay shared whatever ``copy_state`` says: a metric
        read from the collection sees its group's state."""
        if keep_base or (not self.prefix and not self.postfix):
            return self._metrics.items()
        return [(self._set_name(k), m) for k, m in self._metrics.items()]

    def values(self, copy_state: bool = True) -> Iterable[Metric]:
        return self._metrics.values()

    def __repr__(self) -> str:
        shared = {n: o for n, o in self._owner_of.items() if n != o}
        affixes = "".join(f", {a}={getattr(self, a)!r}" for a in ("prefix", "postfix") if getattr(self, a))
        return f"MetricCollection({list(self._metrics)}{affixes}, shared={shared})"



    def _renamed(self, results: Dict[str, Any]) -> Dict[str, Any]:
        """Results keyed as the user sees them: a dict result is flattened into its own keys
        (prefixed with its metric's key where two would collide); prefix and postfix added."""
        if not self.prefix and not self.postfix and not any(isinstance(r, dict) for r in results.values()):
            return results  # the keys as they are, in the caller's own dict (every step, per-step usages)
        flat: Dict[str, Any] = {}
        dict_keys = [k for r in results.values() if isinstance(r, dict) for k in r]
        collide = len(dict_keys) != len(set(dict_keys))
        for name, value in results.items():
            if isinstance(value, dict):
                for key, inner in value.items():
                    flat[f"{name}_{key}" if collide else key] = inner
            else:
                flat[name] = value
        if not self.prefix and not self.postfix:
            return flat
        return {self._set_name(k): v for k, v in flat.items()}

    def _set_name(self, base: str) -> str:
        return f"{self.prefix or ''}{base}{self.postfix or ''}"
