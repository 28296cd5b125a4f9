"""DLPack as the C core reads it: the ABI layout against the installed torch's ATen/dlpack.h,
what dlpack_info reports, both capsule kinds, and the ownership rules (rename to "used_...",
the deleter runs exactly once, also on errors; nothing is kept alive).

A DLPack producer written with ctypes stands in for torch where the test needs to see the
deleter run or to set fields torch never sets (byte_offset, NULL strides, odd devices/dtypes).
"""

import ctypes
import gc
import os
import shutil
import subprocess
import sys
import weakref

import pytest
import torch
from support.kernel_inputs import generator, labels, start_counts
from torch.multiprocessing.reductions import StorageWeakRef

# ---- the DLPack ABI in ctypes (checked against the header in test_layout_matches_torch_header) --


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


STRUCTS = {
    "DLPackVersion": (DLPackVersion, ("major", "minor")),
    "DLDevice": (DLDevice, ("device_type", "device_id")),
    "DLDataType": (DLDataType, ("code", "bits", "lanes")),
    "DLTensor": (DLTensor, ("data", "device", "ndim", "dtype", "shape", "strides", "byte_offset")),
    "DLManagedTensor": (DLManagedTensor, ("dl_tensor", "manager_ctx", "deleter")),
    "DLManagedTensorVersioned": (DLManagedTensorVersioned, ("version", "manager_ctx", "deleter", "flags", "dl_tensor")),
}

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]

# DLPack dtype codes: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6
DL_DTYPES = {
    torch.bool: (6, 8),
    torch.uint8: (1, 8),
    torch.int8: (0, 8),
    torch.int16: (0, 16),
    torch.int32: (0, 32),
    torch.int64: (0, 64),
    torch.float16: (2, 16),
    torch.bfloat16: (4, 16),
    torch.float32: (2, 32),
    torch.float64: (2, 64),
}


class Producer:
    """Exports `backing` (a contiguous tensor that owns the memory) with the given DLPack fields.
    Every capsule it hands out is recorded; `deleted` counts deleter calls."""

    def __init__(self, backing, shape, strides=None, byte_offset=0, dtype=None, device=(1, 0), versioned=True, flags=0):
        self.backing, self.shape, self.strides, self.byte_offset = backing, shape, strides, byte_offset
        self.flags = flags  # DLManagedTensorVersioned.flags (bit 0: read-only)
        self.code, self.bits = DL_DTYPES[backing.dtype] if dtype is None else dtype[:2]
        self.lanes = 1 if dtype is None or len(dtype) < 3 else dtype[2]
        self.device, self.versioned = device, versioned
        self.capsules, self.deleted, self.requests = [], 0, []
        self._keep = []
        self._deleter = DELETER(self._on_delete)

    def _on_delete(self, address):
        self.deleted += 1

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        self.requests.append(max_version)
        return self._export(self.versioned and max_version is not None and tuple(max_version) >= (1, 0))

    def _export(self, versioned: bool):
        ndim = len(self.shape)
        shape = (ctypes.c_int64 * max(ndim, 1))(*self.shape)
        strides = None if self.strides is None else (ctypes.c_int64 * max(ndim, 1))(*self.strides)
        tensor = DLTensor(
            self.backing.data_ptr(),
            DLDevice(*self.device),
            ndim,
            DLDataType(self.code, self.bits, self.lanes),
            shape,
            ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64)) if strides is not None else None,
            self.byte_offset,
        )
        if versioned:
            managed, name = (
                DLManagedTensorVersioned(DLPackVersion(1, 0), None, self._deleter, self.flags, tensor),
                b"dltensor_versioned",
            )
        else:
            managed, name = DLManagedTensor(tensor, None, self._deleter), b"dltensor"
        self._keep.append((shape, strides, managed, name))
        capsule = _capsule_new(ctypes.addressof(managed), name, None)
        self.capsules.append((capsule, name))
        return capsule

    def all_used_once(self) -> bool:
        """Every capsule handed out was renamed to its used_ name, and one deleter call each."""
        renamed = all(_capsule_is_valid(c, b"used_" + name) for c, name in self.capsules)
        return renamed and self.deleted == len(self.capsules)


class LegacyProducer(Producer):
    """A producer from before DLPack 1.0: __dlpack__ takes no max_version."""

    def __dlpack__(self, stream=None):
        self.requests.append(None)
        return self._export(False)


class Wrapped:
    """Forwards to a torch tensor's own __dlpack__: torch's capsules, without the exchange table
    that torch.Tensor has, so the C core must take the capsule path."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, **kwargs):
        return self.t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def producer_of(t, cls=Producer, **fields):
    """A producer of t's values: row-major strides, the memory of a contiguous copy."""
    backing = t.contiguous()
    return cls(backing, tuple(t.shape), tuple(backing.stride()), **fields)


def clean_env():
    """The sanitizer run preloads ASan/UBSan; the compiler and the probe must not inherit that."""
    env = dict(os.environ)
    for key in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS"):
        env.pop(key, None)
    return env


# ---- (a) the ABI layout ------------------------------------------------------------------------


def torch_dlpack_header() -> str:
    roots = [os.path.join(os.path.dirname(torch.__file__), "include")]
    try:
        from torch.utils.cpp_extension import include_paths

        roots += include_paths()
    except Exception:  # only a fallback for the path above
        pass
    for root in roots:
        path = os.path.join(root, "ATen", "dlpack.h")
        if os.path.exists(path):
            return path
    pytest.fail(f"ATen/dlpack.h not found under {roots}")


def header_layout(tmp_path) -> dict:
    """sizeof / offsetof of every DLPack struct, from a C program built against torch's header."""
    lines = []
    for struct, (_, fields) in STRUCTS.items():
        lines.append(f'    printf("{struct} %zu\\n", sizeof({struct}));')
        lines += [f'    printf("{struct}.{f} %zu\\n", offsetof({struct}, {f}));' for f in fields]
    source = tmp_path / "layout.c"
    source.write_text(
        "#include <stddef.h>\n#include <stdio.h>\n#include <ATen/dlpack.h>\n"
        "int main(void) {\n" + "\n".join(lines) + "\n    return 0;\n}\n"
    )
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    assert compiler, "no C compiler (cc) on PATH; the extension needs one too"
    header_root = os.path.dirname(os.path.dirname(torch_dlpack_header()))
    binary = tmp_path / "layout"
    subprocess.run(
        [compiler, "-std=c11", "-I", header_root, str(source), "-o", str(binary)],
        check=True,
        env=clean_env(),
        capture_output=True,
    )
    output = subprocess.run([str(binary)], check=True, env=clean_env(), capture_output=True, text=True).stdout
    return {key: int(value) for key, value in (line.split() for line in output.splitlines())}


def test_layout_matches_torch_header(c_core, tmp_path):
    want = header_layout(tmp_path)
    assert len(want) == len(STRUCTS) + sum(len(f) for _, f in STRUCTS.values())
    assert c_core.dlpack_layout() == want
    ours = {}
    for struct, (cls, fields) in STRUCTS.items():  # the ctypes producer below uses the same ABI
        ours[struct] = ctypes.sizeof(cls)
        ours.update({f"{struct}.{f}": getattr(cls, f).offset for f in fields})
    assert ours == want


# ---- (b) what the C core reads -----------------------------------------------------------------

VIEWS = {
    "contiguous": lambda: torch.arange(12, dtype=torch.float32).reshape(3, 4),
    "sliced": lambda: torch.arange(60, dtype=torch.float64).reshape(6, 10)[1:5:2, 3::3],
    "transposed": lambda: torch.arange(12, dtype=torch.int32).reshape(3, 4).t(),
    "expanded": lambda: torch.tensor([1, 2, 3], dtype=torch.int8).expand(4, 3),
    "vector-bool": lambda: torch.tensor([True, False, True])[::2],
    "bfloat16": lambda: torch.ones(2, 5, dtype=torch.bfloat16)[:, 1:],
    "scalar": lambda: torch.tensor(3.5, dtype=torch.float16),
}


@pytest.mark.parametrize("view", list(VIEWS))
def test_info_of_torch_tensors(c_core, view):
    t = VIEWS[view]()
    info = c_core.dlpack_info(t)
    code, bits = DL_DTYPES[t.dtype]
    assert (info["device_type"], info["device_id"]) == (1, 0)
    assert (info["code"], info["bits"], info["lanes"]) == (code, bits, 1)
    assert info["ndim"] == t.dim()
    assert tuple(info["shape"]) == tuple(t.shape)
    if t.numel() > 1:  # strides of size-1 dimensions carry no information
        assert [s for s, n in zip(info["strides"], t.shape) if n > 1] == [
            s for s, n in zip(t.stride(), t.shape) if n > 1
        ]


@pytest.mark.parametrize(
    "cls,versioned",
    [(Producer, True), (Producer, False), (LegacyProducer, False)],
    ids=["versioned", "legacy-capsule-from-new-producer", "legacy-producer"],
)
def test_info_of_both_capsule_kinds(c_core, cls, versioned):
    backing = torch.arange(40, dtype=torch.int16)
    fields = {} if cls is LegacyProducer else {"versioned": versioned}
    p = cls(backing, (3, 4), (8, 2), byte_offset=6, **fields)  # a [3, 4] view from element 3
    info = c_core.dlpack_info(p)
    assert info["versioned"] is versioned
    assert info["byte_offset"] == 6
    assert (info["code"], info["bits"], info["lanes"]) == (0, 16, 1)
    assert tuple(info["shape"]) == (3, 4) and tuple(info["strides"]) == (8, 2)
    assert p.requests[0] in ((1, 0), None) and p.all_used_once()


@pytest.mark.parametrize(
    "cls,versioned",
    [(Producer, True), (Producer, False), (LegacyProducer, False)],
    ids=["versioned", "legacy-capsule-from-new-producer", "legacy-producer"],
)
def test_kernels_read_capsules_with_offset_and_strides(c_core, cls, versioned):
    """Scores [N, C] at byte_offset 8 with a row stride of C + 1, target with NULL strides."""
    g = generator(70)
    n, c = 1500, 4
    wide = torch.randn(n + 1, c + 1, generator=g, dtype=torch.float64)
    fields = {} if cls is LegacyProducer else {"versioned": versioned}
    scores = cls(wide, (n, c), (c + 1, 1), byte_offset=8, **fields)
    target = labels((n,), c, torch.int64, g)
    target_p = cls(target, (n,), None, **fields)
    out = start_counts((c, c), g)
    want = out.clone()
    c_core.confmat_scores(out, scores, target_p, None, None)
    torch.ops.aten.index_put_(
        want,
        (target, wide.view(-1)[1 : 1 + n * (c + 1)].view(n, c + 1)[:, :c].argmax(1)),
        torch.ones(n, dtype=torch.int64),
        accumulate=True,
    )
    assert torch.equal(out, want)
    assert scores.all_used_once() and target_p.all_used_once()


# ---- (c) ownership: deleters, renames, no leaks ------------------------------------------------


def good_labels_args(g):
    return [start_counts((4, 4), g), labels((300,), 4, torch.int64, g), labels((300,), 4, torch.int64, g), None, None]


ERRORS = {
    "float-labels": (lambda a: producer_of(a[1].float()), 1, TypeError),
    "label-out-of-range": (lambda a: producer_of(torch.cat([a[1][:-1], torch.tensor([9])])), 1, ValueError),
    "cuda-device": (lambda a: producer_of(a[1], device=(2, 0)), 1, ValueError),
    "two-lanes": (lambda a: producer_of(a[1], dtype=(0, 64, 2)), 1, TypeError),
    "complex": (lambda a: producer_of(a[1], dtype=(5, 64)), 1, TypeError),
    "five-dims": (lambda a: Producer(a[1], (300, 1, 1, 1, 1), (1, 1, 1, 1, 1)), 1, ValueError),
    "later-argument-bad": (lambda a: producer_of(a[1]), 1, TypeError),  # with ignore_index = "x"
    "target-too-short": (lambda a: producer_of(a[2][:-1]), 2, ValueError),
}


@pytest.mark.parametrize("error", list(ERRORS))
def test_deleter_runs_once_on_error(c_core, error):
    g = generator(71)
    args = good_labels_args(g)
    make, position, exc = ERRORS[error]
    producer = make(args)
    args[position] = producer
    if error == "later-argument-bad":
        args[4] = "x"
    before = args[0].clone()
    with pytest.raises(exc):
        c_core.confmat_labels(*args)
    assert torch.equal(args[0], before)
    assert len(producer.capsules) == 1 and producer.all_used_once()


def test_same_producer_twice_is_two_capsules(c_core):
    g = generator(72)
    p = producer_of(labels((500,), 3, torch.uint8, g))
    out = torch.zeros(3, 3, dtype=torch.int64)
    c_core.confmat_labels(out, p, p, None, None)
    assert int(out.trace()) == 500
    assert len(p.capsules) == 2 and p.all_used_once()


def test_error_before_reading_a_producer_leaves_it_unread_or_released(c_core):
    g = generator(73)
    p = producer_of(labels((10,), 3, torch.int64, g))
    with pytest.raises(TypeError):
        c_core.confmat_labels([0], p, p, None, None)
    assert p.all_used_once()  # also true when nothing was exported


@pytest.mark.parametrize("path", ["torch-tensor", "capsule"])
def test_no_reference_or_storage_leak(c_core, path):
    """Many calls, good and bad: refcounts return to where they were, the producer object and
    the tensor memory die with the last Python reference (a capsule never released keeps
    torch's storage alive)."""
    g = generator(74)
    out = torch.zeros(4, 4, dtype=torch.int64)
    preds, target = labels((300,), 4, torch.int64, g), labels((300,), 4, torch.int64, g)
    bad = preds.clone()
    bad[-1] = 7
    storages = [StorageWeakRef(t.untyped_storage()) for t in (out, preds, target, bad)]
    wrap = Wrapped if path == "capsule" else (lambda t: t)
    p_preds, p_target, p_bad = wrap(preds), wrap(target[::1]), wrap(bad)
    alive = weakref.ref(p_preds) if path == "capsule" else None
    counts = [sys.getrefcount(o) for o in (out, p_preds, p_target, p_bad)]
    for _ in range(300):
        c_core.confmat_labels(out, p_preds, p_target, None, None)
        with pytest.raises(ValueError):
            c_core.confmat_labels(out, p_bad, p_target, None, None)
    assert [sys.getrefcount(o) for o in (out, p_preds, p_target, p_bad)] == counts
    assert int(out.sum()) == 300 * 300
    del out, preds, target, bad, p_preds, p_target, p_bad
    gc.collect()
    assert all(s.expired() for s in storages)
    assert alive is None or alive() is None


READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY


@pytest.mark.parametrize("kernel", ["confmat_labels", "moments_update"])
def test_read_only_output_is_refused_and_left_alone(c_core, kernel):
    """A versioned export flagged read-only may be read but never written: as out/state it is a
    ValueError naming the argument, its memory is untouched, and its deleter still runs once."""
    g = generator(71)
    if kernel == "confmat_labels":
        out = start_counts((4, 4), g)
        args = [labels((50,), 4, torch.int64, g), labels((50,), 4, torch.int64, g), None, None]
        name = "out"
    else:
        out = torch.zeros(1, 6, dtype=torch.float64)
        args = [torch.randn(50, generator=g), None]
        name = "state"
    before = out.clone()
    exported = producer_of(out, flags=READ_ONLY)
    exported.backing = out  # export out's own memory, so a write would show
    with pytest.raises(ValueError, match=rf"^{name}: expected a writable tensor"):
        getattr(c_core, kernel)(exported, *args)
    assert torch.equal(out, before)
    assert exported.all_used_once()
    # the same flag on an input is fine: inputs are only read
    if kernel == "confmat_labels":
        c_core.confmat_labels(out, producer_of(args[0], flags=READ_ONLY), args[1], None, None)
        assert int(out.sum()) == int(before.sum()) + 50
