"""The binary wheel of `make wheel`: one cp310-abi3 manylinux wheel holding torchtally._C,
torchtally._C_cuda and torchtally._nccl, built against CPython's limited API, so that it installs
without a C compiler on every Python from 3.10 on.

Checked here: its name and contents; `abi3audit --strict` finds no symbol outside Python 3.10's
stable ABI; it installs, with no compiler on PATH (CC=false), into fresh virtual environments of
Python 3.10, 3.12 and 3.13 (pyenv's; required: a missing one fails, saying how to install it),
where, without torch (torch for those Pythons is a multi-GB CUDA build), drive_extension.py loads
the extension modules by file (the package's __init__ imports torch; the extensions need
neither torch nor numpy) and drives a kernel with numpy arrays through DLPack; and on this
environment's Python, drive_metrics.py runs a few metrics from the installed wheel, not the
source tree, through torch.

The wheel is the one in TORCHTALLY_WHEEL_DIR when that is set (`make test` builds it first, with
`make wheel`); else it is built here, into a temporary folder, with `make abi3-wheel` (about a
minute; pytest-xdist workers take turns, as the build folder is build/abi3). numpy's wheels for
the other Pythons come from the package index (`pip download`), then install from a local folder.
"""

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FRESH_PYTHONS = ("3.10", "3.12", "3.13")
EXTENSIONS = ("_C", "_C_cuda", "_nccl")
TIMEOUT_S = 300


def run(command, **kwargs):
    """`command`, its output kept; a failure shows that output."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, **kwargs)
    assert done.returncode == 0, (
        f"{' '.join(map(str, command))} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    )
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    folder = os.environ.get("TORCHTALLY_WHEEL_DIR")
    if not folder:
        folder = str(tmp_path_factory.mktemp("wheel"))
        (ROOT / "build").mkdir(exist_ok=True)
        with open(ROOT / "build" / "abi3.lock", "w") as lock:  # pytest-xdist workers build one at a time
            fcntl.flock(lock, fcntl.LOCK_EX)
            run(["make", "--no-print-directory", "abi3-wheel", f"PY={sys.executable}", f"WHEEL_DIR={folder}"], cwd=ROOT)
    wheels = sorted((ROOT / folder).glob("torchtally-*.whl"))  # a relative folder is the checkout's
    assert len(wheels) == 1, f"expected one torchtally wheel in {folder}, found {[w.name for w in wheels]}"
    return wheels[0]


def fresh_python(version: str) -> Path:
    """pyenv's newest Python `version` ($PYENV_ROOT, else ~/.pyenv), else python<version> on PATH."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    patch = re.compile(rf"{re.escape(version)}\.(\d+)$")
    found = sorted(
        (int(match.group(1)), p / "bin" / f"python{version}")
        for p in root.glob(f"versions/{version}.*")
        if (match := patch.match(p.name)) and (p / "bin" / f"python{version}").is_file()
    )
    if found:
        return found[-1][1]
    on_path = shutil.which(f"python{version}")
    if on_path and subprocess.run([on_path, "-c", ""], capture_output=True).returncode == 0:
        return Path(on_path)
    pytest.fail(
        f"Python {version} is needed to check the abi3 wheel on it and was not found (pyenv root {root}, "
        f"PATH): install it with `pyenv install {version}` (or put python{version} on PATH)"
    )


def no_compiler_env(bin_folder: Path) -> dict:
    """An environment whose PATH is `bin_folder` alone, with CC/CXX set to `false`."""
    env = {"PATH": str(bin_folder), "HOME": os.environ.get("HOME", "/tmp"), "CC": "false", "CXX": "false"}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    for compiler in ("cc", "gcc", "c++", "g++", "clang"):
        assert shutil.which(compiler, path=env["PATH"]) is None, compiler
    return env


def test_one_abi3_manylinux_wheel_with_the_three_extensions(wheel):
    assert re.fullmatch(r"torchtally-[^-]+-cp310-abi3-manylinux_\d+_\d+_\w+\.whl", wheel.name), wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    shared = sorted(n for n in names if ".so" in Path(n).name)
    assert shared == sorted(f"torchtally/{name}.abi3.so" for name in EXTENSIONS)
    assert "torchtally/__init__.py" in names and "torchtally/_C.pyi" in names


def test_abi3audit_finds_no_symbol_outside_the_stable_abi(wheel):
    report = json.loads(run([sys.executable, "-m", "abi3audit", "--strict", "--report", str(wheel)]))
    (scanned,) = report["specs"].values()
    results = {entry["name"]: entry["result"] for entry in scanned["wheel"]}
    assert sorted(results) == sorted(f"{name}.abi3.so" for name in EXTENSIONS)
    for name, result in results.items():
        assert result["is_abi3"] and result["baseline"] == "3.10", (name, result)
        assert result["non_abi3_symbols"] == [] and result["future_abi3_objects"] == {}, (name, result)


@pytest.mark.parametrize("version", FRESH_PYTHONS)
def test_installs_without_a_compiler_and_runs_without_torch(version, wheel, tmp_path):
    python = fresh_python(version)
    venv = tmp_path / f"venv{version}"
    run([str(python), "-m", "venv", "--without-pip", str(venv)])
    wheelhouse = tmp_path / "wheelhouse"
    run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:"]
        + ["--python-version", version, "-d", str(wheelhouse), "numpy"]
    )
    env = no_compiler_env(venv / "bin")
    # this environment's pip, run by the new environment's Python (it has none of its own);
    # --no-deps: torch is left out on purpose
    run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-index"]
        + ["--no-deps", "--find-links", str(wheelhouse), "numpy", str(wheel)],
        env=env,
        cwd=tmp_path,
    )
    out = run([str(venv / "bin" / "python"), str(HERE / "drive_extension.py")], env=env, cwd=tmp_path)
    assert out.startswith(f"ok ({version.replace('.', ', ')})"), out


def test_metrics_run_from_the_installed_wheel_through_torch(wheel, tmp_path):
    site = tmp_path / "site"
    env = no_compiler_env(Path(sys.executable).parent)
    run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target", str(site), str(wheel)],
        env=env,
    )
    env["PYTHONPATH"] = str(site)  # the wheel's files before the source tree's editable install
    out = run([sys.executable, str(HERE / "drive_metrics.py"), str(site)], env=env, cwd=tmp_path)
    assert out.startswith("ok"), out
