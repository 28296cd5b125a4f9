"""A metric's ``state_dict``: nn.Module's, with torchmetrics' ``persistent`` flag, and a load
that checks every entry (dtype, shape, strict keys, the metric's own invariants through the
``check_state_invariants`` hook) before it assigns any.

Options: ``state_dict()`` records the metric's options (``described_options``) in the state
dict's metadata (``state_dict._metadata[<module prefix>]["torchtally_options"]``, where
nn.Module keeps each module's version), and a load that brings states checks them: an option
both sides have and that differs raises ValueError naming it and both values, before anything
is assigned. A state dict without them (saved before torchtally recorded options, or rebuilt
as a plain dict, which drops the metadata) loads unchecked; an option only one side has is not
compared (a later torchtally may add options). To load states counted under other options on
purpose, pass ``dict(state_dict)``.

A mixin of Metric: it reads and writes Metric's state registry (``_specs``, ``_persistent``).
"""

from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Tuple

import torch
from torch import nn

from ..sync.fingerprint import OptionTexts, raise_if_different
from ..sync.plan import StateSpec
from .lists import LIST, copied
from .resume import (
    DcpStateDict,
    gather_from_ranks,
    is_resumable,
    pack_record,
    process_rank,
    raise_if_record_differs,
    unpack_record,
)

OPTIONS_KEY = "torchtally_options"  # the entry of a module's state_dict metadata holding its options


def raise_key_problems(owner: str, missing: List[str], unexpected: List[str]) -> None:
    """Raise nn.Module's strict-load error for these keys, if any (before anything is loaded)."""
    parts = [
        f"{what} key(s) in state_dict: " + ", ".join(f'"{k}"' for k in keys)
        for what, keys in (("Missing", missing), ("Unexpected", unexpected))
        if keys
    ]
    if parts:
        raise RuntimeError(f"Error(s) in loading state_dict for {owner}:\n\t" + "\n\t".join(parts))


class StateDict(DcpStateDict):
    if TYPE_CHECKING:  # Metric's, set in its __init__ (base/metric.py), by its other mixins and nn.Module
        _specs: Dict[str, Tuple[str, torch.Tensor]]
        _persistent: Dict[str, bool]
        _modules: Dict[str, Any]
        device: torch.device

        @property
        def described_options(self) -> OptionTexts: ...
        def forget_rejected_cuda_updates(self) -> None: ...
        def _set_states(self, states: Dict[str, torch.Tensor]) -> None: ...
        def _share_my_state(self) -> None: ...
        def _check_rows(self, name: str, rows: Any, where: str) -> torch.Tensor: ...
        def combine_states(self, name: str, values: List[Any]) -> Any: ...
        def state_specs(self, label_prefix: str = "", unit: int = 0) -> List[StateSpec]: ...
        def reset(self) -> Any: ...

    def persistent(self, mode: bool = False) -> None:
        """Whether ``state_dict()`` (this metric's, and every parent module's) includes the states."""
        for name in self._persistent:
            self._persistent[name] = bool(mode)

    def _save_to_state_dict(self, destination: Dict[str, Any], prefix: str, keep_vars: bool) -> None:
        # nn.Module's, after this mixin in Metric's MRO
        super()._save_to_state_dict(destination, prefix, keep_vars)  # type: ignore[misc]
        with self.__dict__["_lock"]:
            for name, keep in self._persistent.items():
                if keep:
                    value = getattr(self, name)
                    if self._specs[name][0] == LIST:  # a new list of cloned items, as torchmetrics saves
                        destination[prefix + name] = copied(value, keep_vars)
                    else:
                        destination[prefix + name] = value if keep_vars else value.detach().clone()
            local_metadata = getattr(destination, "_metadata", {}).get(prefix[:-1])
            if local_metadata is not None:  # nn.Module.state_dict made it for this module
                local_metadata[OPTIONS_KEY] = dict(self.described_options)

    def check_saved_options(self, state_dict: Mapping[str, Any], prefix: str = "") -> None:
        """ValueError when ``state_dict`` brings states of this metric (under ``prefix``) saved
        with options that differ from this metric's (see the module docstring)."""
        if not any(prefix + name in state_dict for name in self._specs):
            return  # nothing of this metric is loaded: its options do not matter
        saved = getattr(state_dict, "_metadata", {}).get(prefix[:-1], {}).get(OPTIONS_KEY)
        if saved is not None:
            raise_if_different(
                type(self).__name__,
                self.described_options,
                saved,
                "load_state_dict",
                "the state_dict",
                common_only=True,
            )

    def resumable_state_dict(self) -> Dict[str, Any]:
        """This metric's state on every rank, as ``{"torchtally_resume": bytes}``: what
        ``dcp.save`` stores, loadable by :meth:`load_state_dict` at any world size.

        A collective under torch.distributed: every rank of the default process group must call
        it (``dcp.save`` does), at a batch boundary. The local state is unchanged."""
        return pack_record("Metric", {"ranks": gather_from_ranks(self.resumable_payload())})

    def resumable_payload(self) -> Dict[str, Any]:
        """This rank's part of :meth:`resumable_state_dict`: class, state layout, options, the
        states (CPU copies; a cat state as one tensor) and whether it holds data. No collective."""
        with self.__dict__["_lock"]:
            states = {}
            for name, (reduce, _) in self._specs.items():
                value = getattr(self, name)
                if reduce == LIST:
                    states[name] = [t.detach().cpu().clone() for t in value]
                else:
                    states[name] = value.detach().cpu().clone()
            return {
                "class": _class_path(self),
                "states": states,
                "specs": [spec.describe() for spec in self.state_specs()],
                "options": dict(self.described_options),
                "updated": bool(self.__dict__["_updated"]),
            }

    def load_resumable_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Load :meth:`resumable_state_dict`'s form, saved at any world size: rank 0 takes the
        saved ranks' states combined by each state's reduce (cat states in saved rank order),
        the other ranks start empty, so the total counts every saved sample once. A checkpoint
        of another class, state layout, option or torchtally version raises ValueError naming
        what differs, before anything is assigned (every rank checks)."""
        self.assign_resumed(self.checked_resume(unpack_record(state_dict, "Metric")["ranks"], type(self).__name__))

    def checked_resume(self, payloads: List[Dict[str, Any]], owner: str) -> Tuple[Dict[str, Any], bool]:
        """The states of ``payloads`` (every saved rank's ``resumable_payload``) combined and
        checked as a load would check them, and whether any rank held data: nothing assigned."""
        mine = {"class": _class_path(self), "states": [spec.describe() for spec in self.state_specs()]}
        for payload in payloads:
            raise_if_different(owner, self.described_options, payload["options"], "load_state_dict", "the checkpoint")
            raise_if_record_differs(owner, mine, {"class": payload["class"], "states": payload["specs"]})
        combined = {n: self.combine_states(n, [p["states"][n] for p in payloads]) for n in self._specs}
        return self.check_state_dict(combined, strict=True), any(p["updated"] for p in payloads)

    def assign_resumed(self, resumed: Tuple[Dict[str, Any], bool]) -> None:
        """Take ``checked_resume``'s result on rank 0; start empty on the other ranks."""
        if process_rank()[0] != 0:
            self.reset()
            return
        checked, updated = resumed
        with self.__dict__["_lock"]:
            self.forget_rejected_cuda_updates()
            self._set_states(checked)
            self.__dict__["_updated"] = updated
            self.__dict__["_cache"] = None
            self._share_my_state()

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False) -> Any:
        """nn.Module's load_state_dict; the states found are checked (dtype, shape, values, and
        this metric's ``check_state_invariants``) before any is assigned, so a bad entry raises
        naming its key and leaves the metric unchanged. The metric keeps C-contiguous copies
        (never the given tensors). Loading states makes the metric count as updated.

        A resumable state dict (``resumable_state_dict()``, what ``dcp.load`` brings) goes to
        :meth:`load_resumable_state_dict` instead, and None is returned."""
        if is_resumable(state_dict):
            self.load_resumable_state_dict(state_dict)
            return None
        self.check_state_dict(state_dict, strict=False)
        self.check_saved_options(state_dict)
        if strict:  # nn.Module would report these only after assigning the rest
            raise_key_problems(type(self).__name__, *self.state_dict_key_problems(state_dict))
        # self is a Metric, an nn.Module
        return nn.Module.load_state_dict(self, state_dict, strict=strict, assign=assign)  # type: ignore[arg-type]

    def state_dict_key_problems(self, state_dict: Mapping[str, Any], prefix: str = "") -> Tuple[List[str], List[str]]:
        """(missing, unexpected) keys of ``state_dict`` for this metric under ``prefix``, as a
        strict load counts them: persistent states are required, unknown keys are refused."""
        children = tuple(f"{prefix}{name}." for name in self._modules)
        missing = [prefix + n for n, keep in self._persistent.items() if keep and prefix + n not in state_dict]
        unexpected = [
            k
            for k in state_dict
            if k.startswith(prefix) and k[len(prefix) :] not in self._specs and not k.startswith(children)
        ]
        return missing, unexpected

    def _load_from_state_dict(
        self,
        state_dict: Dict[str, Any],
        prefix: str,
        local_metadata: Dict[str, Any],
        strict: bool,
        missing_keys: List[str],
        unexpected_keys: List[str],
        error_msgs: List[str],
    ) -> None:
        found = {n: state_dict[prefix + n] for n in self._specs if prefix + n in state_dict}
        if strict:  # as for a module's persistent buffers
            missing_keys.extend(prefix + n for n, keep in self._persistent.items() if keep and n not in found)
        if found:
            saved = local_metadata.get(OPTIONS_KEY)
            if saved is not None:
                raise_if_different(
                    type(self).__name__,
                    self.described_options,
                    saved,
                    "load_state_dict",
                    "the state_dict",
                    common_only=True,
                )
            checked = self.check_state_dict(found, strict=False)
            with self.__dict__["_lock"]:
                self.forget_rejected_cuda_updates()  # the loaded states replace what they concerned
                self._set_states(checked)
                self.__dict__["_updated"] = True
                self.__dict__["_cache"] = None
                self._share_my_state()
            for n in found:
                state_dict.pop(prefix + n)
        super()._load_from_state_dict(  # type: ignore[misc]  # nn.Module's, after this mixin in Metric's MRO
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    def check_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool, where: str = "load_state_dict"
    ) -> Dict[str, Any]:
        """The entries of ``state_dict`` that are states of this metric, checked and copied onto
        its device as new C-contiguous tensors (never the caller's, whatever their strides); with
        ``strict``, every state must be there and nothing else.

        Checked per entry: a tensor holding values (not meta), the declared dtype and shape (for
        cat / merge states: the row shape); then the states as they would be after the load
        (the loaded ones, the others as they are) go through ``check_state_invariants``. Any
        failure raises before anything is assigned, naming the state."""
        if strict:
            missing = [n for n in self._specs if n not in state_dict]
            unexpected = [k for k in state_dict if k not in self._specs]
            if missing or unexpected:
                raise KeyError(f"{type(self).__name__}.{where}: missing states {missing}, unexpected keys {unexpected}")
        checked: Dict[str, Any] = {}
        for name, (reduce, default) in self._specs.items():
            if name not in state_dict:
                continue
            value = state_dict[name]
            if reduce == LIST:
                if not isinstance(value, (list, tuple)) or not all(isinstance(t, torch.Tensor) for t in value):
                    raise TypeError(f"{where}('{name}'): expected a list of tensors (a list state)")
                checked[name] = [t.detach().to(self.device, copy=True) for t in value]
                continue
            if reduce in ("cat", "merge"):
                value = self._check_rows(name, value, where)
            else:
                if not isinstance(value, torch.Tensor):
                    raise TypeError(f"{where}('{name}'): expected a tensor, got {type(value).__name__}")
                if value.dtype != default.dtype or value.shape != default.shape:
                    raise ValueError(
                        f"{where}('{name}'): expected dtype {default.dtype} shape {tuple(default.shape)}, "
                        f"got dtype {value.dtype} shape {tuple(value.shape)}"
                    )
                if value.is_meta and self.device.type != "meta":
                    raise ValueError(f"{where}('{name}'): a meta tensor holds no values to load")
            # A fresh contiguous copy: the kernels write states in place and need C-contiguous
            # memory (a transposed [C, C] matrix has the right shape and dtype, not the layout).
            checked[name] = value.detach().to(self.device, memory_format=torch.contiguous_format, copy=True)
        if checked:
            after = {n: checked[n] if n in checked else getattr(self, n) for n in self._specs}
            try:
                self.check_state_invariants(after)
            except ValueError as exc:
                raise ValueError(f"{type(self).__name__}.{where}: {exc}") from None
        return checked

    def check_state_invariants(self, states: Dict[str, Any]) -> None:
        """Raise ValueError, naming the state, when ``states`` (every state by name: as a load
        would leave them, or the incoming states of ``merge_state({...})``) break a rule this
        metric's updates keep and dtype and shape checks cannot see: e.g. the curve metrics'
        exact mode needs as many labels as scores and every label in range, the count states
        need counts >= 0.

        Called by ``load_state_dict`` and ``merge_state({...})`` before anything is assigned,
        so a metric that raises here is left as it was. The default accepts any states; a
        subclass overrides it (calling ``super().check_state_invariants(states)`` when its base
        has rules too). Runs at load time only: it may read the states (a host sync is fine).
        """


def _class_path(obj: Any) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def check_nonnegative(states: Dict[str, torch.Tensor], *names: str) -> None:
    """For ``check_state_invariants``: ValueError naming the first of ``names`` (those present
    in ``states``) holding a negative value (counts, sums of weights or of squares). NaN passes:
    where a NaN can be legitimate state the metric's own rules say so."""
    for name in names:
        value = states.get(name)
        if value is not None and value.numel() and bool((value < 0).any()):
            raise ValueError(f"'{name}': expected values >= 0, got {value.min().item()}")
