"""Run by test_wheel.py with the Python of a fresh virtual environment that holds the installed
wheel and numpy, and no torch: the three extension modules of the installed package, loaded from
its folder by file without running torchtally/__init__.py (which imports torch), a kernel driven
with numpy arrays (they speak DLPack), and the binding's messages. Prints "ok" at the end; any
failure is an exception (exit status 1)."""

import importlib.machinery
import importlib.util
import os
import sys

import numpy as np


def load_extension(name):
    """torchtally.<name> from the installed package's folder; nothing of the package runs."""
    package = importlib.util.find_spec("torchtally")  # locates the package, imports nothing
    assert package is not None and package.submodule_search_locations, "torchtally is not installed"
    folder = package.submodule_search_locations[0]
    assert "site-packages" in folder, f"torchtally comes from {folder}, not from the installed wheel"
    path = os.path.join(folder, f"{name}.abi3.so")
    assert os.path.isfile(path), f"{path}: no abi3 extension (folder holds {sorted(os.listdir(folder))})"
    loader = importlib.machinery.ExtensionFileLoader(f"torchtally.{name}", path)
    spec = importlib.util.spec_from_file_location(f"torchtally.{name}", path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def expect_error(kind, message, call, *args):
    try:
        call(*args)
    except kind as error:
        assert str(error) == message, f"{str(error)!r} != {message!r}"
    else:
        raise AssertionError(f"no {kind.__name__}: {message}")


def check_confusion_matrix(_C):
    rng = np.random.default_rng(0)
    preds = rng.integers(0, 4, size=1000)
    target = rng.integers(0, 4, size=1000)
    counts = np.zeros((4, 4), np.int64)
    _C.confmat_labels(counts, preds, target, None, None)
    expected = np.zeros((4, 4), np.int64)
    np.add.at(expected, (target, preds), 1)
    assert (counts == expected).all(), (counts, expected)

    # int32 labels, every other sample (a strided view), a mask and an ignore_index on top
    mask = rng.integers(0, 2, size=500).astype(bool)
    counts[:] = 0
    _C.confmat_labels(counts, preds[::2].astype(np.int32), target[::2].astype(np.int32), mask, 3)
    keep = mask & (target[::2] != 3)
    expected[:] = 0
    np.add.at(expected, (target[::2][keep], preds[::2][keep]), 1)
    assert (counts == expected).all(), (counts, expected)

    # the messages of the limited-API binding, word for word; the output untouched
    before = counts.copy()
    expect_error(
        TypeError,
        "target: expected a tensor (an object with __dlpack__), got str",
        _C.confmat_labels,
        counts,
        preds,
        "x",
        None,
        None,
    )
    expect_error(
        TypeError, "ignore_index: expected an int, got float", _C.confmat_labels, counts, preds, target, None, 1.5
    )
    expect_error(
        TypeError,
        "ignore_index: expected an int, got numpy.int64",
        _C.confmat_labels,
        counts,
        preds,
        target,
        None,
        np.int64(1),
    )
    expect_error(
        TypeError, "confmat_labels() takes 5 positional arguments (out, ...), got 2", _C.confmat_labels, counts, preds
    )
    expect_error(
        ValueError,
        "preds: label 4 at index 0 is out of range [0, 3)",
        _C.confmat_labels,
        np.zeros((3, 3), np.int64),
        np.array([4, 0]),
        np.array([0, 0]),
        None,
        None,
    )
    assert (counts == before).all()


def main():
    _C = load_extension("_C")
    check_confusion_matrix(_C)

    _C_cuda = load_extension("_C_cuda")  # the CUDA driver is loaded at first use, not at import
    assert any(name.startswith("tt_confmat_labels") for name in _C_cuda.kernel_names())
    assert "__global__" in _C_cuda.kernel_source()
    expect_error(TypeError, "image: expected bytes (a cubin or PTX), got str", _C_cuda.load_kernels, 0, "ptx")

    _nccl = load_extension("_nccl")  # libnccl is loaded at first use, not at import
    expect_error(TypeError, "path: expected a str, got int", _nccl.load, 42)

    assert "torch" not in sys.modules
    print("ok", sys.version_info[:2])


if __name__ == "__main__":
    main()
