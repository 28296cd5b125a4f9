"""torchtally._C_cuda's host protocol around the kernels, without a GPU: stand-in CUDA tensors
(FakeCuda), the fake driver (torchtally.kernels.cuda.emulation's fake_libcuda.c, which logs
every launch and emulates the error latch on the host) and the real NVRTC image. What each call
launches (the variant the launch picks: shared or global histograms, a thread or a warp per row,
the score dtype), the count / undo / latch sequence, the grid, a rejection reported by the latch
raised at the next update and by check() with the CPU core's message, immediate checks, and graph
capture refused before any launch. The kernels themselves run only on a GPU (tests/cuda)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from torchtally import _C_cuda
from torchtally.kernels.cuda import nvrtc
from torchtally.kernels.cuda.emulation import build_driver

PRELUDE = """
import json, os, sys, types
import torch
torch.cuda.current_stream = lambda device=None: types.SimpleNamespace(cuda_stream=0)  # no CUDA torch here
from torchtally.kernels.cuda.emulation import FakeCuda
from torchtally import _C_cuda
_C_cuda.load_kernels(0, open({image!r}, "rb").read())
LOG = os.environ["FAKE_CUDA_LOG"]

def launches():
    if not os.path.exists(LOG):
        return []
    with open(LOG) as f:
        rows = [line.split() for line in f]
    os.remove(LOG)
    return [[r[0]] + [int(x) for x in r[1:6]] for r in rows]  # name gx gy bx by shared (then gz bz optin)

def error(call):
    try:
        call()
    except Exception as exc:
        return f"{{type(exc).__name__}}: {{exc}}"
    return None

def fake(t):
    return FakeCuda(t)

z = lambda *shape: torch.zeros(*shape, dtype=torch.int64)
result = {{}}
"""


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    path = tmp_path_factory.mktemp("image") / "kernels.cubin"
    path.write_bytes(nvrtc.find().compile(_C_cuda.kernel_source(), "sm_90").image)
    return str(path)


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    return build_driver(tmp_path_factory.mktemp("fake_driver"), _C_cuda.kernel_source())


def run(fake_driver, image, tmp_path, body: str) -> dict:
    script = PRELUDE.format(image=image) + textwrap.dedent(body) + "\nprint(json.dumps(result))\n"
    env = {**os.environ, "TORCHTALLY_LIBCUDA": fake_driver, "FAKE_CUDA_LOG": str(tmp_path / "launches.log")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def names(rows):
    return [r[0] for r in rows]


def test_each_call_launches_its_variant_then_the_gated_undo_then_the_latch(fake_driver, image, tmp_path):
    got = run(
        fake_driver,
        image,
        tmp_path,
        """
    labels = torch.randint(0, 4, (3000,))
    _C_cuda.confmat_labels(fake(z(4, 4)), fake(labels), fake(labels), None, None)
    result["labels C=4"] = launches()
    wide = torch.randint(0, 130, (100,))
    _C_cuda.confmat_labels(fake(z(130, 130)), fake(wide), fake(wide), None, None)
    result["labels C=130"] = launches()
    variants = ((5, torch.float32, "rows"), (40, torch.float32, "rows"), (40, torch.bfloat16, "rows"),
                (120, torch.float16, "rows"), (24, torch.float64, "columns"))
    for classes, dtype, layout in variants:
        scores = torch.rand(64, classes).to(dtype)
        if layout == "columns":
            scores = scores.t().contiguous().t()
        target = torch.randint(0, classes, (64,))
        _C_cuda.confmat_scores(fake(z(classes, classes)), fake(scores), fake(target), None, None)
        result[f"scores C={classes} {dtype} {layout}"] = launches()
    binary = torch.randint(0, 2, (50,))
    _C_cuda.confmat_threshold(fake(z(2, 2)), fake(torch.rand(50) * 4), fake(binary), None, None, 0.5, 0.0)
    result["threshold with logit_threshold"] = launches()
    for count in (11, 3000):
        thresholds = torch.linspace(0, 1, count, dtype=torch.float64)
        binary = torch.randint(0, 2, (80,))
        out = z(1, count + 1, 2)
        _C_cuda.binned_update(fake(out), fake(torch.rand(80)), fake(binary), None, None, fake(thresholds), 1)
        result[f"binned T={count}"] = launches()
    for classes in (10, 5000):
        _C_cuda.topk_update(fake(z(classes, 3)), fake(torch.rand(8, classes, dtype=torch.float64)),
                            fake(torch.randint(0, classes, (8,))), None, None, 2)
        result[f"topk C={classes}"] = launches()
    _C_cuda.moments_update(fake(torch.zeros(3, 6, dtype=torch.float64)), fake(torch.rand(500, 3)), None)
    result["moments"] = launches()
    _C_cuda.comoments_update(fake(torch.zeros(1, 6, dtype=torch.float64)), fake(torch.rand(500)), fake(torch.rand(500)))
    result["comoments"] = launches()
    _C_cuda.moments_merge(fake(torch.zeros(3, 6, dtype=torch.float64)), fake(torch.zeros(3, 6, dtype=torch.float64)))
    result["merge"] = launches()
    """,
    )

    def counted(kernel):  # the count, its undo replay (the same launch), the latch
        return [kernel, kernel, "tt_latch"]

    assert names(got["labels C=4"]) == counted("tt_confmat_labels_shared")
    assert got["labels C=4"][0][1:] == [3, 1, 256, 1, 4 * 4 * 4]  # ceil(3000 / 1024) blocks, the [4, 4] counts shared
    assert names(got["labels C=130"]) == counted("tt_confmat_labels_global") and got["labels C=130"][0][5] == 0
    assert names(got["scores C=5 torch.float32 rows"]) == counted("tt_confmat_scores_thread_shared_f32")
    assert names(got["scores C=40 torch.float32 rows"]) == counted("tt_confmat_scores_warp_shared_f32")
    assert names(got["scores C=40 torch.bfloat16 rows"]) == counted("tt_confmat_scores_warp_shared_bf16")
    assert names(got["scores C=120 torch.float16 rows"]) == counted("tt_confmat_scores_warp_global_f16")
    assert names(got["scores C=24 torch.float64 columns"]) == counted("tt_confmat_scores_thread_shared_f64")
    assert names(got["threshold with logit_threshold"]) == ["tt_threshold_pick"] + counted(
        "tt_confmat_threshold_shared"
    )
    assert names(got["binned T=11"]) == ["tt_thresholds_check"] + counted("tt_binned_shared_hist_shared_thr")
    assert got["binned T=11"][1][5] == 11 * 8 + 12 * 2 * 4  # thresholds, then the histogram
    assert names(got["binned T=3000"]) == ["tt_thresholds_check"] + counted("tt_binned_shared_hist_global_thr")
    assert names(got["topk C=10"]) == counted("tt_topk_shared_f64")
    assert names(got["topk C=5000"]) == counted("tt_topk_global_f64")
    assert names(got["moments"]) == ["tt_moments_partial", "tt_moments_finalize", "tt_moments_merge", "tt_latch"]
    assert got["moments"][0][3:5] == [4, 64]  # 3 columns -> blocks of 4 columns x 64 rows
    assert names(got["comoments"]) == [
        "tt_comoments_partial",
        "tt_comoments_finalize",
        "tt_comoments_merge",
        "tt_latch",
    ]
    assert names(got["merge"]) == ["tt_moments_merge"]  # a merge reads nothing back: no latch


def test_a_rejection_the_latch_reports_is_raised_later_with_the_cpu_message(fake_driver, image, tmp_path):
    got = run(
        fake_driver,
        image,
        tmp_path,
        """
    out = z(4, 4)
    target = torch.tensor([0, 1, 2, 7, 1])
    os.environ["FAKE_CUDA_REJECT"] = "3,3"  # sample 3, an out-of-range target
    _C_cuda.confmat_labels(fake(out), fake(target), fake(target), None, None)  # returns: no wait
    del os.environ["FAKE_CUDA_REJECT"]
    launches()
    two = target[:2]
    result["next update"] = error(lambda: _C_cuda.confmat_labels(fake(out), fake(two), fake(two), None, None))
    result["launched by it"] = launches()
    _C_cuda.confmat_labels(fake(out), fake(target), fake(target), None, None)
    os.environ["FAKE_CUDA_REJECT"] = "3,3"
    _C_cuda.confmat_labels(fake(out), fake(target), fake(target), None, None)
    del os.environ["FAKE_CUDA_REJECT"]
    result["check"] = error(lambda: _C_cuda.check(0, out.data_ptr(), out.numel() * 8, True))
    result["check again"] = error(lambda: _C_cuda.check(0, out.data_ptr(), out.numel() * 8, True))
    previous = _C_cuda.set_immediate_checks(True)
    os.environ["FAKE_CUDA_REJECT"] = "3,3"
    result["immediate"] = error(lambda: _C_cuda.confmat_labels(fake(out), fake(target), fake(target), None, None))
    del os.environ["FAKE_CUDA_REJECT"]
    _C_cuda.set_immediate_checks(previous)
    """,
    )
    message = "ValueError: target: label 7 at index 3 is out of range [0, 4)"
    assert got["next update"].startswith(message) and "this call's batch was not run either" in got["next update"]
    assert got["launched by it"] == []  # the update that raised ran nothing
    assert got["check"].startswith(message) and "found on the GPU after that update returned" in got["check"]
    assert got["check again"] is None  # raised once, then forgotten
    assert got["immediate"] == message  # at the call itself, no note


def test_an_update_under_graph_capture_is_refused_before_any_launch(fake_driver, image, tmp_path):
    got = run(
        fake_driver,
        image,
        tmp_path,
        """
    os.environ["FAKE_CUDA_CAPTURING"] = "1"
    labels = torch.tensor([0, 1])
    result["error"] = error(lambda: _C_cuda.confmat_labels(fake(z(2, 2)), fake(labels), fake(labels), None, None))
    result["launches"] = launches()
    """,
    )
    assert got["error"].startswith("ValueError: out: torchtally's CUDA kernels cannot be captured in a CUDA graph")
    assert got["launches"] == []


def test_a_device_without_loaded_kernels_refuses_the_call(fake_driver, image, tmp_path):
    got = run(
        fake_driver,
        image,
        tmp_path,
        """
    labels = torch.tensor([0, 1])
    on_1 = lambda t: FakeCuda(t, device_id=1)
    result["error"] = error(lambda: _C_cuda.confmat_labels(on_1(z(2, 2)), on_1(labels), on_1(labels), None, None))
    """,
    )
    assert got["error"].startswith("ValueError: out: torchtally's CUDA kernels are not loaded on cuda:1")


def test_the_known_answer_check_launches_every_kernel(fake_driver, image, tmp_path):
    """Every kernel a device may be served by is one the known-answer check ran there: its cases,
    called through the CUDA module on stand-in tensors, launch every kernel of kernel_table.h."""
    got = run(
        fake_driver,
        image,
        tmp_path,
        """
    from torchtally.kernels.cuda import known_answer
    from torchtally.kernels.segmentation_status import call_like_c_core
    wrap = lambda args: [fake(a) if isinstance(a, torch.Tensor) else a for a in args]
    for case in known_answer.cases():
        args = case.make(torch.device("cpu"))
        error(lambda: call_like_c_core(_C_cuda, case.kernel, args, wrap))
    result["launched"] = sorted({row[0] for row in launches()})
    """,
    )
    assert got["launched"] == sorted(_C_cuda.kernel_names())


def test_segmentation_launchers_refuse_bad_shapes_with_the_cpu_message_and_launch_nothing(fake_driver, image, tmp_path):
    got = run(
        fake_driver,
        image,
        tmp_path,
        """
    from torchtally import _C
    status = lambda: torch.zeros(1, dtype=torch.int64)
    p2, t2 = torch.zeros(2, 6, dtype=torch.int64), torch.zeros(2, 5, dtype=torch.int64)
    s = fake(status())
    result["label_counts"] = error(lambda: _C_cuda.label_counts(fake(z(2, 3, 3)), s, fake(p2), fake(t2), 0))
    result["label_counts cpu"] = error(lambda: _C.label_counts(z(2, 3, 3), p2, t2, 0))
    p3, t3 = torch.zeros(2, 3, 6, dtype=torch.int64), torch.zeros(2, 4, 6, dtype=torch.int64)
    result["mask_counts"] = error(lambda: _C_cuda.mask_counts(fake(z(2, 3, 3)), fake(status()), fake(p3), fake(t3)))
    result["mask_counts cpu"] = error(lambda: _C.mask_counts(z(2, 3, 3), p3, t3))
    result["launches"] = launches()
    """,
    )
    for name in ("label_counts", "mask_counts"):
        assert got[name] is not None and "target" in got[name] and "shape of preds" in got[name]
        assert got[name] == got[f"{name} cpu"]
    assert got["launches"] == []
