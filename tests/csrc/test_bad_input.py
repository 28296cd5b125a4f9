"""Bad input to every kernel, on both paths: the right exception type, a message that starts
with the offending argument's name (and shows the bad value where there is one), and `out` /
`state` bit-identical to before the call.

Bad values sit at the last sample, after more than one chunk of good ones, so a kernel that
wrote as it went and did not undo would leave a trace in `out`. The cases are in
support/kernel_bad_inputs.py, which the CUDA module's tests replay too.
"""

import pytest
import torch
from support.kernel_bad_inputs import CASES, TENSOR_ARGS, good_args
from support.kernel_inputs import same_bits


@pytest.mark.parametrize("case", CASES, ids=[f"{c.kernel}-{c.what}" for c in CASES])
def test_bad_input_raises_and_leaves_state(impl, case):
    args = good_args(case.kernel)
    case.change(args)
    target_of_write = args[0] if isinstance(args[0], torch.Tensor) else None
    before = None if target_of_write is None else target_of_write.clone()
    with pytest.raises(case.error) as info:
        getattr(impl, case.kernel)(*args)
    message = str(info.value)
    assert message.split(":", 1)[0] in case.names, message
    assert case.shows in message, message
    if before is not None:
        assert same_bits(target_of_write, before)


@pytest.mark.parametrize("kernel", list(TENSOR_ARGS))
def test_good_arguments_are_accepted(impl, kernel):
    """The baseline every bad case edits is itself valid (so each case tests one fault)."""
    args = good_args(kernel)
    getattr(impl, kernel)(*args)


@pytest.mark.parametrize("kernel", list(TENSOR_ARGS))
def test_wrong_number_of_arguments(impl, kernel):
    args = good_args(kernel)
    before = args[0].clone()
    optional = 1 if kernel == "confmat_threshold" else 0  # logit_threshold may be left out
    for wrong in (args[:-1], args + [None] * (1 + optional), []):
        with pytest.raises(TypeError, match=kernel):
            getattr(impl, kernel)(*wrong)
    with pytest.raises(TypeError):
        getattr(impl, kernel)(*args[:-1], **{"x" if kernel.startswith("co") else "mask": args[-1]})
    assert same_bits(args[0], before)
