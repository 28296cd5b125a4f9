"""torchtally._C_cuda on a GPU: every kernel against the C core (the CPU oracle, itself tested
against the torch reference and scikit-learn) on the same values, for every score dtype
(float16 and bfloat16 included), label dtypes, contiguous / sliced / transposed inputs, masks and
ignore_index, sizes that take each kernel variant (shared or global histograms, thread or warp per
row, vector loads or not), on torch's current stream and on a non-default one; and every
bad-input case of the C-core suite, which must raise as the C core does and leave the state
bit-identical (the undo / no-merge protocol of csrc/cuda/launch_count.c and launch_moments.c).

Skips, with the reason, without a CUDA device; fails where the kernels do not serve the device.
"""

import pytest
import torch
from support.kernel_bad_inputs import CASES, good_args
from support.kernel_inputs import (
    LABEL_DTYPES,
    LAYOUTS,
    SCORE_DTYPES,
    dtype_id,
    empty_moments,
    generator,
    labels,
    layout,
    same_bits,
    scores,
    start_counts,
)

from torchtally import _C, _C_cuda, kernels

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")]


@pytest.fixture(autouse=True, scope="module")
def kernels_serve_every_device():
    """The kernels are compiled (NVRTC), loaded and known-answer checked on every device before
    these tests call torchtally._C_cuda directly; a device they cannot serve fails, saying why."""
    for device in range(torch.cuda.device_count()):
        status = kernels.cuda_device_status(device)
        assert status.serves, str(status)


DEV = "cuda"


def gpu(t):
    """`t` on the GPU with the same shape and strides (sliced and transposed layouts survive)."""
    if not isinstance(t, torch.Tensor) or t.device.type != "cpu":
        return t
    out = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=DEV)
    out.copy_(t)
    return out


def on_gpu(args):
    return [gpu(a) for a in args]


def check_counts(kernel: str, args: list) -> None:
    """Runs `kernel` on CPU (C core) and GPU (_C_cuda) from the same starting `out`; equal counts."""
    cpu_args = [a.clone() if i == 0 else a for i, a in enumerate(args)]
    getattr(_C, kernel)(*cpu_args)
    gpu_args = on_gpu(args)
    getattr(_C_cuda, kernel)(*gpu_args)
    torch.cuda.synchronize()
    assert torch.equal(gpu_args[0].cpu(), cpu_args[0]), kernel


def check_moments(kernel: str, args: list) -> None:
    cpu_args = [a.clone() if i == 0 else a for i, a in enumerate(args)]
    getattr(_C, kernel)(*cpu_args)
    gpu_args = on_gpu(args)
    getattr(_C_cuda, kernel)(*gpu_args)
    torch.cuda.synchronize()
    got, want = gpu_args[0].cpu(), cpu_args[0]
    # counts, min and max are exact; sums, means and M2 agree to rounding (one-pass Welford+Chan
    # on the GPU, two-pass on the CPU)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-9, equal_nan=True)


# ---- confusion matrices ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", LABEL_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("c", [5, 200])  # shared-memory histogram / global atomics
def test_confmat_labels(dtype, kind, c):
    g = generator(1)
    n = 30_000
    c_eff = min(c, {torch.bool: 2, torch.int8: 127}.get(dtype, c))  # labels the dtype can hold
    p, t = labels((n,), c_eff, dtype, g), labels((n,), c_eff, dtype, g)
    mask = torch.rand(n, generator=g) < 0.8
    check_counts("confmat_labels", [start_counts((c, c), g), layout(p, kind), layout(t, kind), None, None])
    check_counts("confmat_labels", [start_counts((c, c), g), layout(p, kind), layout(t, kind), layout(mask, kind), 1])


@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("c", [3, 16, 37, 100, 128, 1000])  # thread / warp per row; shared / global; vector tails
def test_confmat_scores(dtype, kind, c):
    g = generator(2)
    n = 4000 if c <= 128 else 1500
    s = scores((n, c), dtype, g, ties=True)  # many exact ties and a few infinities
    t = labels((n,), c, torch.int64, g)
    mask = torch.rand(n, generator=g) < 0.9
    check_counts("confmat_scores", [start_counts((c, c), g), layout(s, kind), layout(t, kind), None, None])
    check_counts("confmat_scores", [start_counts((c, c), g), layout(s, kind), t, mask, 0])


def test_confmat_scores_rows_of_minus_inf_pick_class_0():
    s = torch.full((64, 40), -float("inf"))
    s[::2, 7] = 1.0
    check_counts(
        "confmat_scores", [torch.zeros(40, 40, dtype=torch.int64), s, torch.zeros(64, dtype=torch.int64), None, None]
    )


def test_confmat_scores_large_batch_many_blocks():
    g = generator(3)
    s, t = torch.randn(200_000, 64, generator=g), labels((200_000,), 64, torch.int32, g)
    check_counts("confmat_scores", [start_counts((64, 64), g), s, t, None, None])


@pytest.mark.parametrize("dtype", SCORE_DTYPES + (torch.uint8, torch.int64), ids=dtype_id)
@pytest.mark.parametrize("shape", [(5000,), (5000, 7), (3000, 4000)])  # binary, multilabel, >3072 labels (global)
def test_confmat_threshold(dtype, shape):
    g = generator(4)
    if dtype.is_floating_point:
        p = torch.rand(shape, generator=g).to(dtype)
        p.view(-1)[::97] = 0.5  # exactly at the threshold: not above it
    else:
        p = labels(shape, 2, dtype, g)
    t = labels(shape, 2, torch.int64, g)
    n_labels = shape[1] if len(shape) == 2 else 1
    out_shape = (n_labels, 2, 2) if len(shape) == 2 else (2, 2)
    mask = torch.rand(shape[0], generator=g) < 0.7
    check_counts("confmat_threshold", [start_counts(out_shape, g), p, t, None, None, 0.5])
    check_counts("confmat_threshold", [start_counts(out_shape, g), layout(p, "transposed"), t, mask, 1, 0.25])


@pytest.mark.parametrize("dtype", SCORE_DTYPES + (torch.uint8,), ids=dtype_id)
@pytest.mark.parametrize("shape", [(5000,), (300_000, 7)])  # one block / many blocks for the scan
def test_confmat_threshold_auto_logits(dtype, shape):
    """logit_threshold: the probabilities-or-logits decision made on the device (a scan writing
    the chosen threshold into the workspace) counts as the C core does, for probabilities (exact
    0s and 1s included), logits, and probabilities with one value just above 1 (a logit batch)."""
    g = generator(5)
    logit = -0.8472978603872037  # log(0.3 / 0.7)
    t = labels(shape, 2, torch.int64, g)
    out_shape = (shape[1], 2, 2) if len(shape) == 2 else (2, 2)
    mask = torch.rand(shape[0], generator=g) < 0.7
    if dtype.is_floating_point:
        probs = torch.rand(shape, generator=g).to(dtype)
        probs.view(-1)[::13] = 0.0
        probs.view(-1)[5::17] = 1.0
        flipped = probs.clone()
        one = torch.tensor(1.0, dtype=dtype)
        flipped.view(-1)[-1] = torch.nextafter(one, one + 1)
        batches = [probs, (torch.randn(shape, generator=g) * 3).to(dtype), flipped]
    else:
        batches = [labels(shape, 2, dtype, g)]
    for p in batches:
        check_counts("confmat_threshold", [start_counts(out_shape, g), p, t, None, None, 0.3, logit])
        check_counts("confmat_threshold", [start_counts(out_shape, g), layout(p, "transposed"), t, mask, 1, 0.3, logit])


def test_confmat_threshold_auto_nan_rejected_state_unchanged():
    g = generator(6)
    p, t = torch.rand(10_000, generator=g), labels((10_000,), 2, torch.int64, g)
    p[7777] = float("nan")
    out = gpu(start_counts((2, 2), g))
    before = out.clone()
    previous = _C_cuda.set_immediate_checks(True)
    try:
        with pytest.raises(ValueError, match="^preds: NaN at sample 7777"):
            _C_cuda.confmat_threshold(out, gpu(p), gpu(t), None, None, 0.5, 0.0)
    finally:
        _C_cuda.set_immediate_checks(previous)
    assert torch.equal(out, before)


def test_binary_and_multilabel_metrics_on_cuda_match_cpu():
    """BinaryAccuracy / MultilabelF1Score updates (which pass logit_threshold) on CUDA tensors
    give the CPU results, over batches of probabilities and of logits."""
    import torchtally as tt

    g = generator(7)
    metrics = {}
    for device in ("cpu", DEV):
        acc, f1 = tt.BinaryAccuracy(threshold=0.3).to(device), tt.MultilabelF1Score(num_labels=10).to(device)
        g = generator(7)
        for kind in ("probs", "logits", "probs"):
            make = torch.rand if kind == "probs" else torch.randn
            acc.update(make(256, generator=g).to(device), labels((256,), 2, torch.int64, g).to(device))
            f1.update(make(256, 10, generator=g).to(device), labels((256, 10), 2, torch.int64, g).to(device))
        metrics[device] = (float(acc.compute()), float(f1.compute()))
    assert metrics["cpu"] == metrics[DEV]


# ---- binned histograms -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
@pytest.mark.parametrize("t_count", [11, 1000, 5000])  # shared thresholds and histogram / shared thresholds / global
def test_binned(dtype, task, t_count):
    g = generator(5)
    n, k = 3000, 6
    preds = torch.rand((n,) if task == "binary" else (n, k), generator=g).to(dtype)
    target = labels((n,) if task != "multilabel" else (n, k), 2 if task != "multiclass" else k, torch.int64, g)
    k_out = 1 if task == "binary" else k
    for uniform, thresholds in (
        (True, torch.linspace(0, 1, t_count, dtype=torch.float64)),
        (False, torch.rand(t_count, generator=g, dtype=torch.float64).sort().values),
    ):
        check_counts(
            "binned_update", [start_counts((k_out, t_count + 1, 2), g), preds, target, None, None, thresholds, uniform]
        )
    mask = torch.rand(n, generator=g) < 0.6
    check_counts(
        "binned_update",
        [
            start_counts((k_out, t_count + 1, 2), g),
            layout(preds, "sliced"),
            target,
            mask,
            0,
            torch.linspace(0, 1, t_count, dtype=torch.float64),
            True,
        ],
    )


# ---- top-k -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("c,k", [(5, 1), (5, 5), (40, 3), (1000, 5)])
def test_topk(dtype, c, k):
    g = generator(6)
    n = 2000
    s = scores((n, c), dtype, g, ties=True)
    t = labels((n,), c, torch.int64, g)
    mask = torch.rand(n, generator=g) < 0.8
    check_counts("topk_update", [start_counts((c, 3), g), s, t, None, None, k])
    check_counts("topk_update", [start_counts((c, 3), g), layout(s, "transposed"), t, mask, 2, k])


# ---- moments -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("shape", [(7000,), (7000, 3), (500, 300)])
def test_moments(dtype, shape):
    g = generator(7)
    d = shape[1] if len(shape) == 2 else 1
    x = (torch.randn(shape, generator=g, dtype=torch.float64) * 3 + 1e4).to(dtype)  # a large mean: Welford's case
    w = torch.rand(shape[0], generator=g)
    w[::5] = 0.0
    state = empty_moments(d)
    _C.moments_update(state, torch.randn(shape, generator=g), None)  # a state with content
    check_moments("moments_update", [state, x, None])
    check_moments("moments_update", [state, layout(x, "transposed"), w])
    check_moments("moments_update", [empty_moments(d), x[:0], None])  # empty batch: no change
    y = (torch.randn(shape, generator=g, dtype=torch.float64) - 5).to(dtype)
    co = torch.zeros(d, 6, dtype=torch.float64)
    check_moments("comoments_update", [co, x, y])
    check_moments("comoments_update", [co, layout(x, "sliced"), y])


def test_merges():
    g = generator(8)
    a, b = empty_moments(4), empty_moments(4)
    _C.moments_update(a, torch.randn(100, 4, generator=g), None)
    _C.moments_update(b, torch.randn(50, 4, generator=g) + 7, None)
    check_moments("moments_merge", [a, b])
    check_moments("moments_merge", [a, layout(b, "transposed")])
    check_moments("moments_merge", [empty_moments(4), b])
    ca, cb = torch.zeros(4, 6, dtype=torch.float64), torch.zeros(4, 6, dtype=torch.float64)
    _C.comoments_update(ca, torch.randn(80, 4, generator=g), torch.randn(80, 4, generator=g))
    _C.comoments_update(cb, torch.randn(30, 4, generator=g), torch.randn(30, 4, generator=g) - 3)
    check_moments("comoments_merge", [ca, cb])


# ---- streams, devices, paths ---------------------------------------------------------------------------


def test_runs_on_the_current_stream():
    """On a busy non-default stream, the kernel must see the values that stream wrote last: it
    runs on torch's current stream (a kernel on another stream would read them too early)."""
    g = generator(9)
    n, c = 200_000, 10
    preds, target = labels((n,), c, torch.int64, g), labels((n,), c, torch.int64, g)
    stale = gpu(torch.zeros(n, dtype=torch.int64))
    fresh = gpu(preds)
    out = torch.zeros(c, c, dtype=torch.int64, device=DEV)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.cuda._sleep(100_000_000)  # keep the stream busy for a while
        stale.copy_(fresh)
        kernels.confmat_labels(out, stale, gpu(target))
        state = torch.tensor([[0.0, 0.0, 0.0, 0.0, float("inf"), -float("inf")]], dtype=torch.float64, device=DEV)
        kernels.moments_update(state, stale.double())
    s.synchronize()
    expected = torch.zeros(c, c, dtype=torch.int64)
    _C.confmat_labels(expected, preds, target, None, None)
    assert torch.equal(out.cpu(), expected)
    assert state[0, 0].item() == n and state[0, 1].item() == float(preds.sum())


def test_both_dlpack_paths():
    g = generator(10)
    s, t = torch.randn(3000, 12, generator=g), labels((3000,), 12, torch.int64, g)
    previous = _C_cuda._use_exchange_api(False)  # capsules, and the stream from torch.cuda
    try:
        check_counts("confmat_scores", [start_counts((12, 12), g), s, t, None, None])
    finally:
        _C_cuda._use_exchange_api(previous)
    check_counts("confmat_scores", [start_counts((12, 12), g), s, t, None, None])


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_another_device_and_the_current_device_is_kept():
    g = generator(11)
    p, t = labels((5000,), 7, torch.int64, g), labels((5000,), 7, torch.int64, g)
    expected = torch.zeros(7, 7, dtype=torch.int64)
    _C.confmat_labels(expected, p, t, None, None)
    out = torch.zeros(7, 7, dtype=torch.int64, device="cuda:1")
    with torch.cuda.device(0):
        _C_cuda.confmat_labels(out, p.to("cuda:1"), t.to("cuda:1"), None, None)
        assert torch.cuda.current_device() == 0
    assert torch.equal(out.cpu(), expected)
    with pytest.raises(
        ValueError, match=r"^preds: expected a tensor on cuda:1 \(the device of out\), got one on cuda:0"
    ):
        _C_cuda.confmat_labels(out, p.to("cuda:0"), t.to("cuda:1"), None, None)


def test_cpu_tensor_with_cuda_out_is_refused():
    out = torch.zeros(3, 3, dtype=torch.int64, device=DEV)
    with pytest.raises(
        ValueError, match=r"^preds: expected a CUDA tensor on cuda:\d \(the device of out\), got one on the CPU"
    ):
        _C_cuda.confmat_labels(
            out, torch.zeros(4, dtype=torch.int64), torch.zeros(4, dtype=torch.int64, device=DEV), None, None
        )
    assert int(out.sum()) == 0


def test_routing_sends_cuda_tensors_to_the_cuda_kernels(monkeypatch):
    calls = []
    real = kernels._cuda

    class Spy:
        def __getattr__(self, name):
            calls.append(name)
            return getattr(real, name)

    monkeypatch.setattr(kernels, "_cuda", Spy())
    out = torch.zeros(3, 3, dtype=torch.int64, device=DEV)
    labels_ = torch.tensor([0, 1, 2, 2], device=DEV)
    kernels.confmat_labels(out, labels_, labels_)
    assert calls == ["confmat_labels"] and out.diagonal().tolist() == [1, 1, 2]


def test_a_metric_on_the_gpu_equals_the_cpu():
    from torchtally import MetricCollection, MulticlassAccuracy, MulticlassF1Score

    g = generator(12)
    s, t = torch.randn(20_000, 30, generator=g), labels((20_000,), 30, torch.int64, g)
    on_cpu = MetricCollection([MulticlassAccuracy(num_classes=30), MulticlassF1Score(num_classes=30, average="macro")])
    on_gpu_ = MetricCollection(
        [MulticlassAccuracy(num_classes=30), MulticlassF1Score(num_classes=30, average="macro")]
    ).to(DEV)
    for lo in range(0, 20_000, 4096):
        on_cpu.update(s[lo : lo + 4096], t[lo : lo + 4096])
        on_gpu_.update(gpu(s[lo : lo + 4096]), gpu(t[lo : lo + 4096]))
    a, b = on_cpu.compute(), on_gpu_.compute()
    for key in a:
        torch.testing.assert_close(b[key].cpu(), a[key], rtol=0, atol=0)


# ---- bad input -----------------------------------------------------------------------------------------

GPU_CASES = [c for c in CASES if "meta" not in c.what]


@pytest.fixture(params=["immediate", "deferred"])
def checks(request):
    """Both error-check modes of _C_cuda (see set_immediate_checks)."""
    previous = _C_cuda.set_immediate_checks(request.param == "immediate")
    yield request.param
    _C_cuda.set_immediate_checks(previous)


def check(state: torch.Tensor) -> None:
    """Waits for the updates into `state` and raises the first rejection the device found."""
    _C_cuda.check(state.device.index, state.data_ptr(), state.numel() * state.element_size(), True)


def run_checked(kernel: str, args: list) -> None:
    """Runs `kernel`; then asks, waiting, for a rejection the device found (deferred mode)."""
    getattr(_C_cuda, kernel)(*args)
    check(args[0])


@pytest.mark.parametrize("case", GPU_CASES, ids=[f"{c.kernel}-{c.what}" for c in GPU_CASES])
def test_bad_input_raises_and_leaves_state(case, checks):
    args = good_args(case.kernel)
    case.change(args)
    args = on_gpu(args)
    target_of_write = args[0] if isinstance(args[0], torch.Tensor) else None
    before = None if target_of_write is None else target_of_write.clone()
    with pytest.raises(case.error) as info:
        run_checked(case.kernel, args)
    message = str(info.value)
    assert message.split(":", 1)[0] in case.names, message
    assert case.shows in message, message
    if before is not None:
        torch.cuda.synchronize()
        assert same_bits(target_of_write.cpu(), before.cpu())


def test_the_first_bad_sample_is_reported(checks):
    n = 50_000
    target = torch.zeros(n, dtype=torch.int64)
    target[[40_000, 123, 7_777]] = 9
    out = torch.zeros(5, 5, dtype=torch.int64, device=DEV)
    with pytest.raises(ValueError, match=r"^target: label 9 at index 123 is out of range \[0, 5\)"):
        run_checked("confmat_labels", [out, gpu(torch.zeros(n, dtype=torch.int64)), gpu(target), None, None])
    s = torch.randn(n, 5)
    s[30_000, 1] = float("nan")
    s[2_000, 4] = float("nan")
    with pytest.raises(ValueError, match=r"^preds: NaN in the scores of sample 2000"):
        run_checked("confmat_scores", [out, gpu(s), gpu(torch.zeros(n, dtype=torch.int64)), None, None])
    torch.cuda.synchronize()
    assert int(out.abs().sum()) == 0


# ---- deferred checks: no host synchronisation in an update -----------------------------------------


@pytest.fixture
def deferred():
    previous = _C_cuda.set_immediate_checks(False)
    yield
    _C_cuda.set_immediate_checks(previous)


def busy_stream():
    """Keeps the current stream busy for about a second (a spinning kernel)."""
    torch.cuda.synchronize()
    torch.cuda._sleep(2_000_000_000)
    assert not torch.cuda.current_stream().query()


@pytest.mark.parametrize("kernel", ["confmat_scores", "binned_update", "topk_update", "moments_update"])
def test_a_deferred_update_does_not_wait_for_the_gpu(deferred, kernel):
    from support.kernel_bad_inputs import good_args as args_of

    args = on_gpu(args_of(kernel))
    getattr(_C_cuda, kernel)(*args)  # first use: workspace and pinned reports (may synchronise)
    busy_stream()
    getattr(_C_cuda, kernel)(*args)
    assert not torch.cuda.current_stream().query(), "the update waited for the GPU"
    torch.cuda.synchronize()
    check(args[0])


def test_an_immediate_update_waits_and_raises_at_the_call():
    previous = _C_cuda.set_immediate_checks(True)
    try:
        out = torch.zeros(5, 5, dtype=torch.int64, device=DEV)
        _C_cuda.confmat_labels(out, gpu(torch.tensor([1])), gpu(torch.tensor([1])), None, None)
        out.zero_()
        busy_stream()
        with pytest.raises(ValueError, match=r"^target: label 7 at index 0"):
            _C_cuda.confmat_labels(out, gpu(torch.tensor([1])), gpu(torch.tensor([7])), None, None)
        assert torch.cuda.current_stream().query()
        assert int(out.abs().sum()) == 0
    finally:
        _C_cuda.set_immediate_checks(previous)


def test_a_rejected_batch_raises_at_the_next_update_into_that_state(deferred):
    n = 1000
    preds, good = gpu(torch.arange(n) % 5), gpu(torch.arange(n) % 5)
    bad = gpu(torch.where(torch.arange(n) == 3, 9, torch.arange(n) % 5))
    out = torch.zeros(5, 5, dtype=torch.int64, device=DEV)
    other = torch.zeros(5, 5, dtype=torch.int64, device=DEV)
    _C_cuda.confmat_labels(out, preds, bad, None, None)  # returns: the check runs on the device
    torch.cuda.synchronize()
    assert int(out.abs().sum()) == 0  # already undone on the device
    _C_cuda.confmat_labels(other, preds, good, None, None)  # another state is not concerned
    with pytest.raises(
        ValueError,
        match=r"^target: label 9 at index 3 is out of range \[0, 5\) \(found on the GPU after that earlier update",
    ):
        _C_cuda.confmat_labels(out, preds, good, None, None)
    torch.cuda.synchronize()
    assert int(out.abs().sum()) == 0  # the call that raised did not run its batch
    _C_cuda.confmat_labels(out, preds, good, None, None)  # reported once: the state works again
    check(out)
    want = torch.zeros(5, 5, dtype=torch.int64)
    _C.confmat_labels(want, preds.cpu(), good.cpu(), None, None)
    assert torch.equal(out.cpu(), want) and torch.equal(other.cpu(), want)


def test_a_rejected_moments_batch_is_never_merged(deferred):
    state = gpu(empty_moments(2))
    x = torch.randn(500, 2)
    _C_cuda.moments_update(state, gpu(x), None)
    torch.cuda.synchronize()
    before = state.clone()
    x[321, 1] = float("nan")
    _C_cuda.moments_update(state, gpu(x), None)
    with pytest.raises(ValueError, match=r"^x: NaN at sample 321, column 1") as info:
        check(state)
    # raised by a check, not by a later update: no claim about a batch of this call
    assert str(info.value).endswith("(found on the GPU after that update returned: none of its batch was counted)")
    assert same_bits(state.cpu(), before.cpu())
    w = torch.ones(500, dtype=torch.float64)
    w[17] = -2.0
    single = gpu(empty_moments(1))
    _C_cuda.moments_update(single, gpu(torch.randn(500)), gpu(w))
    with pytest.raises(ValueError, match=r"^weights: expected finite weights >= 0, got -2 at sample 17"):
        _C_cuda.check(single.device.index, 0, 0, True)  # 0: any state of the device


def test_discard_forgets_a_rejection(deferred):
    out = torch.zeros(3, 3, dtype=torch.int64, device=DEV)
    _C_cuda.confmat_labels(out, gpu(torch.tensor([0])), gpu(torch.tensor([5])), None, None)
    _C_cuda.discard(out.device.index, out.data_ptr(), out.numel() * out.element_size())
    check(out)  # nothing left to raise
    torch.cuda.synchronize()
    assert int(out.abs().sum()) == 0


def test_the_bad_threshold_values_are_named(deferred):
    out = torch.zeros(1, 4, 2, dtype=torch.int64, device=DEV)
    thr = gpu(torch.tensor([0.1, 0.7, 0.4], dtype=torch.float64))
    _C_cuda.binned_update(out, gpu(torch.rand(10)), gpu(torch.zeros(10, dtype=torch.int64)), None, None, thr, False)
    with pytest.raises(ValueError, match=r"^thresholds: expected non-decreasing values, got 0.4 after 0.7 at index 2"):
        check(out)
    torch.cuda.synchronize()
    assert int(out.abs().sum()) == 0


def test_a_metric_raises_a_rejected_batch_at_compute(deferred):
    from torchtally import MulticlassAccuracy

    metric = MulticlassAccuracy(num_classes=3, average="micro").to(DEV)
    metric.update(gpu(torch.tensor([0, 1, 2])), gpu(torch.tensor([0, 1, 1])))
    metric.update(gpu(torch.tensor([0, 1])), gpu(torch.tensor([0, 5])))  # returns: checked on the GPU
    with pytest.raises(ValueError, match=r"^target: label 5 at index 1 is out of range \[0, 3\)"):
        metric.compute()
    assert float(metric.compute()) == pytest.approx(2 / 3)  # the bad batch left no trace
    metric.update(gpu(torch.tensor([0])), gpu(torch.tensor([9])))
    metric.reset()  # the pending rejection goes with the state it concerned
    metric.update(gpu(torch.tensor([1])), gpu(torch.tensor([1])))
    assert float(metric.compute()) == 1.0


def test_forward_raises_a_rejected_batch_instead_of_its_value(deferred):
    """forward's batch update goes into fresh states the next update never reaches: the batch
    must be checked before its value leaves, and a rejection deferred in the accumulated state
    raised too, each leaving the metric (and a collection) as it was."""
    from torchtally import MetricCollection, MulticlassAccuracy, MulticlassF1Score

    metric = MulticlassAccuracy(num_classes=3, average="micro").to(DEV)
    metric(gpu(torch.tensor([0, 1, 2])), gpu(torch.tensor([0, 1, 1])))
    with pytest.raises(ValueError, match=r"^target: label 5 at index 1 is out of range \[0, 3\)"):
        metric(gpu(torch.tensor([0, 1])), gpu(torch.tensor([0, 5])))
    assert float(metric.compute()) == pytest.approx(2 / 3) and metric.update_count == 1
    metric.update(gpu(torch.tensor([0])), gpu(torch.tensor([7])))  # deferred in the accumulated state
    with pytest.raises(ValueError, match=r"^target: label 7"):
        metric(gpu(torch.tensor([1])), gpu(torch.tensor([1])))
    assert float(metric.compute()) == pytest.approx(2 / 3)
    coll = MetricCollection({"acc": MulticlassAccuracy(num_classes=3), "f1": MulticlassF1Score(num_classes=3)}).to(DEV)
    coll(gpu(torch.tensor([0, 1])), gpu(torch.tensor([0, 1])))
    with pytest.raises(ValueError, match=r"^target: label 4"):
        coll(gpu(torch.tensor([0, 1])), gpu(torch.tensor([4, 1])))
    assert float(coll.compute()["acc"]) == 1.0


def test_a_check_of_a_state_covers_updates_into_a_part_of_it(deferred):
    state = gpu(empty_moments(4))
    x = torch.randn(100, 2)
    x[5, 0] = float("nan")
    _C_cuda.moments_update(state[2:], gpu(x), None)  # a view: its data starts 2 rows in
    check(state[:2])  # the other half is not concerned
    with pytest.raises(ValueError, match=r"^x: NaN at sample 5, column 0"):
        check(state)
    assert same_bits(state.cpu(), empty_moments(4))


def test_functional_forms_raise_a_rejected_batch_before_returning(deferred):
    from torchtally.functional import binary_auroc, multiclass_accuracy

    with pytest.raises(ValueError, match=r"^target: label 4 at index 1 is out of range \[0, 3\)"):
        multiclass_accuracy(gpu(torch.tensor([0, 1])), gpu(torch.tensor([0, 4])), num_classes=3)
    with pytest.raises(ValueError, match=r"^target: label 2 at sample 0 is out of range \[0, 2\)"):
        binary_auroc(gpu(torch.tensor([0.2, 0.7])), gpu(torch.tensor([2, 0])), thresholds=5)


# ---- the run-time compiled path ----------------------------------------------------------------


def test_cuda_status_says_the_kernels_serve_the_device():
    import torchtally

    status = torchtally.cuda_status()
    assert status.devices and all(d.serves for d in status.devices), str(status)
    assert "torchtally's kernels" in str(status.devices[0]) and status.devices[0].checked


def test_an_update_inside_cuda_graph_capture_raises_at_the_call_and_the_capture_survives():
    out = torch.zeros(3, 3, dtype=torch.int64, device=DEV)
    p = torch.tensor([0, 1, 2, 1], device=DEV)
    g = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        with pytest.raises(ValueError, match="cannot be captured in a CUDA graph"):
            with torch.cuda.graph(g, stream=stream):
                doubled = p * 2
                _C_cuda.confmat_labels(out, p, p, None, None)
    torch.cuda.current_stream().wait_stream(stream)
    _C_cuda.confmat_labels(out, p, p, None, None)  # the next update, outside capture, runs
    kernels.raise_rejected_cuda_updates([out])
    assert out.diagonal().tolist() == [1, 2, 1] and doubled is not None


def test_updates_make_no_host_synchronisation():
    out = torch.zeros(10, 10, dtype=torch.int64, device=DEV)
    binned = torch.zeros(1, 101, 2, dtype=torch.int64, device=DEV)
    thresholds = torch.linspace(0, 1, 100, dtype=torch.float64, device=DEV)
    state = torch.zeros(1, 6, dtype=torch.float64, device=DEV)
    scores = torch.rand(4096, 10, device=DEV)
    target = torch.randint(0, 10, (4096,), device=DEV)
    for _ in range(2):  # the second round runs with every workspace and report slot made
        previous = torch.cuda.get_sync_debug_mode()
        torch.cuda.set_sync_debug_mode("error")
        try:
            _C_cuda.confmat_scores(out, scores, target, None, None)
            _C_cuda.confmat_labels(out, target, target, None, None)
            _C_cuda.topk_update(torch.zeros(10, 3, dtype=torch.int64, device=DEV), scores, target, None, None, 3)
            _C_cuda.binned_update(binned, scores[:, 0], (target > 4).long(), None, None, thresholds, True)
            _C_cuda.moments_update(state, scores[:, :1], None)
        finally:
            torch.cuda.set_sync_debug_mode(previous)
    kernels.raise_rejected_cuda_updates([out, binned, state])
