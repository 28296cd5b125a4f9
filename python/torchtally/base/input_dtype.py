"""InputDtypeMixin: the widest float dtype of a metric's inputs, as a state, for results whose
dtype follows the inputs' (regression's NRMSE and divergences, image's UQI and RASE)."""

from typing import TYPE_CHECKING, Any, Dict, List, Union

import torch
from torch import Tensor

from ..functional.regression import update as reg_update

__all__ = ["InputDtypeMixin"]


class InputDtypeMixin:
    """The widest float dtype of the inputs seen, for results that follow it (as torchmetrics'
    do where its state is promoted by the inputs): a 1-element int64 "max" state holding a
    ``FLOAT_CODES`` code (0: integer inputs only, or none), rewritten only when a wider dtype
    arrives, so an update reads nothing back from the device."""

    if TYPE_CHECKING:  # the Metric this mixin is combined with, and the state it declares
        input_float: Tensor

        @property
        def dtype(self) -> torch.dtype: ...
        def add_state(
            self,
            name: str,
            default: Union[Tensor, List[Any]],
            reduce: Any = None,
            persistent: bool = False,
            *,
            dist_reduce_fx: Any = None,
        ) -> None: ...

    def _add_input_dtype(self) -> None:
        self.add_state("input_float", torch.zeros(1, dtype=torch.int64), reduce="max")
        self._float_seen = reg_update.FormTracker()

    def _note_input_dtype(self, *tensors: Tensor) -> None:
        form = self._float_seen.check(self.input_float, (reg_update.float_code(*tensors),))
        if form is not None:
            self.input_float = reg_update.form_tensor(form, self.input_float.device)
            self._float_seen.wrote(self.input_float, form)

    def _input_code(self) -> int:
        return int(self.input_float[0])

    def _check_input_dtype(self, states: Dict[str, Tensor]) -> None:
        code = states.get("input_float")
        if code is not None and code.numel() and not 0 <= int(code.min()) <= int(code.max()) <= 4:
            raise ValueError(f"'input_float': expected a float dtype code in 0..4, got {code.tolist()}")
