"""kernels.cuda.known_answer: the check a device's kernels pass before they serve it, run here on
the CPU with torchtally._C in the kernels' place (the same contract): the CPU core passes every
case, and a kernel that miscounts, accepts a bad batch, rejects a good one, damages the state
it refuses or fails outright is named."""

import torch

from torchtally import _C
from torchtally.kernels import reference
from torchtally.kernels.cuda import known_answer


class Altered:
    """torchtally._C with one kernel changed by `change(name, args, call)`."""

    def __init__(self, change):
        self.change = change

    def __getattr__(self, name):
        kernel = getattr(_C, name)
        return lambda *args: self.change(name, args, lambda: kernel(*args))


def test_the_cpu_core_agrees_with_the_reference_on_every_case():
    assert known_answer.run(_C, reference, torch.device("cpu")) == []


def test_every_kernel_family_and_variant_has_a_case():
    cases = known_answer.cases()
    kernels = {c.kernel for c in cases}
    assert kernels == {
        "confmat_labels",
        "confmat_scores",
        "confmat_threshold",
        "binned_update",
        "topk_update",
        "moments_update",
        "comoments_update",
        "moments_merge",
        "comoments_merge",
        "label_counts",
        "mask_counts",
        "class_argmax",
    }
    names = [c.name for c in cases]
    assert len(names) == len(set(names))
    for dtype in ("float16", "bfloat16", "float32", "float64"):  # each score dtype's kernels
        assert f"topk_update {dtype}" in names and f"confmat_scores C=40 {dtype}" in names
    assert any(c.rejected for c in cases if c.kernel == "confmat_labels")
    assert any(c.rejected for c in cases if c.kernel == "moments_update")
    for kernel in ("label_counts", "mask_counts"):  # the device status, explained
        assert any(c.rejected for c in cases if c.kernel == kernel)


def test_a_miscount_in_one_dtype_variant_is_named():
    def change(name, args, call):
        call()
        if name == "confmat_scores" and args[1].dtype == torch.bfloat16 and args[0].shape[0] == 40:
            args[0][3, 3] += 1

    assert known_answer.run(Altered(change), reference, "cpu") == [
        "confmat_scores C=40 bfloat16: the state differs from the torch reference's"
    ]


def test_accepting_a_bad_batch_and_refusing_a_good_one_are_named():
    def accept(name, args, call):
        try:
            call()
        except ValueError:
            pass

    found = known_answer.run(Altered(accept), reference, "cpu")
    assert "confmat_labels, a label out of range: the batch was accepted (the reference rejected it)" in found
    assert len(found) == sum(c.rejected for c in known_answer.cases())

    def refuse(name, args, call):
        if name == "moments_merge":
            raise ValueError("other: refused")
        call()

    assert known_answer.run(Altered(refuse), reference, "cpu") == [
        "moments_merge: rejected a good batch: other: refused"
    ]


def test_a_refused_batch_that_changed_the_state_is_named():
    def damage(name, args, call):
        try:
            call()
        except ValueError:
            args[0].view(-1)[0] += 1
            raise

    found = known_answer.run(Altered(damage), reference, "cpu")
    assert "moments_update, a NaN: the state differs from the torch reference's" in found


def test_a_kernel_that_fails_is_named_with_its_error():
    def fail(name, args, call):
        if name == "binned_update":
            raise RuntimeError("CUDA: a kernel launch failed: CUDA_ERROR_ILLEGAL_ADDRESS")
        call()

    found = known_answer.run(Altered(fail), reference, "cpu", only=["binned_update T=11 K=3", "topk_update float32"])
    assert found == ["binned_update T=11 K=3: RuntimeError: CUDA: a kernel launch failed: CUDA_ERROR_ILLEGAL_ADDRESS"]
