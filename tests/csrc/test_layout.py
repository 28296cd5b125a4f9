"""The layout rules of csrc/, checked on its source (the C half of tests/test_architecture.py):

* no include cycle among csrc/'s files (every quoted include must resolve to one of them);
* layers: core/ includes only core/; kernels/ core/ and kernels/; cpu/ those and cpu/; cuda/
  core/ and cuda/; nccl/ only nccl/ and core/'s header-only module definition;
* each extension is built from its own folders only (setup.py's EXTENSION_FOLDERS), and every
  C source under csrc/ belongs to one of them (the CUDA sources are embedded in torchtally._C_cuda
  as its kernels' device source);
* no file under csrc/ over 500 lines.
"""

import importlib.util
import re
from pathlib import Path
from typing import Dict, List, Set

import pytest

ROOT = Path(__file__).resolve().parents[2]
CSRC = ROOT / "csrc"
MAX_LINES = 500
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)

# What a file in each folder may include: whole folders, or single header-only files.
ALLOWED_INCLUDES = {
    "core": {"core"},
    "kernels": {"core", "kernels"},
    "cpu": {"core", "kernels", "cpu"},
    "cuda": {"core", "cuda"},
    "nccl": {"nccl", "core/module_def.h", "core/args.h"},
}
# The folders each extension is built from (torchtally._nccl links nothing of the others).
EXPECTED_FOLDERS = {
    "torchtally._C": {"core", "kernels", "cpu"},
    "torchtally._C_cuda": {"core", "cuda"},
    "torchtally._nccl": {"nccl"},
}
SOURCE_SUFFIXES = {".c"}
GENERATED = {"kernel_source.h"}  # written by setup.py into the build folder (the embedded kernels)
CODE_SUFFIXES = {".c", ".h", ".cu", ".cuh"}


def code_files() -> List[Path]:
    return sorted(p for p in CSRC.rglob("*") if p.suffix in CODE_SUFFIXES)


def rel(path: Path) -> str:
    return path.relative_to(CSRC).as_posix()


def includes(path: Path) -> List[str]:
    """The csrc/-relative files `path` includes with quotes: found next to it, else under csrc/
    (the build's include path), as the compiler looks them up."""
    found = []
    for name in INCLUDE.findall(path.read_text()):
        if name in GENERATED:
            continue
        for base in (path.parent, CSRC):
            target = (base / name).resolve()
            if target.is_file():
                found.append(rel(target))
                break
        else:
            pytest.fail(f'{rel(path)}: #include "{name}" is not a file of csrc/')
    return found


def include_graph() -> Dict[str, Set[str]]:
    return {rel(p): set(includes(p)) for p in code_files()}


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Every include cycle, as the path that closes it (depth-first search)."""
    found, state, stack = [], {}, []

    def visit(node: str) -> None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a.h": {"b.h"}, "b.h": {"c.h"}, "c.h": {"a.h"}}) == [["a.h", "b.h", "c.h", "a.h"]]
    assert cycles({"a.h": {"b.h"}, "b.h": set(), "c.h": {"b.h"}}) == []


def test_include_graph_is_read():
    graph = include_graph()
    assert "core/binding.h" in graph["cpu/module.c"]
    assert "core/view.h" in graph["kernels/confmat.h"]
    assert "cuda/device_abi.h" in graph["cuda/common.cuh"]


def test_no_include_cycle():
    assert cycles(include_graph()) == []


def test_includes_follow_the_layers():
    wrong = []
    for path in code_files():
        folder = rel(path).split("/")[0]
        allowed = ALLOWED_INCLUDES.get(folder)
        if allowed is None:
            wrong.append(f"{rel(path)}: not in a known folder of csrc/ ({', '.join(ALLOWED_INCLUDES)})")
            continue
        for target in includes(path):
            if target.split("/")[0] not in allowed and target not in allowed:
                wrong.append(f"{rel(path)} includes {target}")
    assert wrong == []


def test_no_file_over_the_line_limit():
    files = [p for p in CSRC.rglob("*") if p.is_file()]
    assert len(files) > 20
    long = {rel(p): n for p in files if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


@pytest.fixture(scope="module")
def setup_py():
    spec = importlib.util.spec_from_file_location("torchtally_setup_layout", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not __main__: defines the helpers, builds nothing
    return module


def test_each_extension_builds_from_its_own_folders(setup_py, monkeypatch):
    monkeypatch.chdir(ROOT)
    exts = setup_py.extensions()
    assert {e.name: set(setup_py.EXTENSION_FOLDERS[e.name]) for e in exts} == EXPECTED_FOLDERS
    built = set()
    for ext in exts:
        folders = {Path(s).parent.relative_to("csrc").as_posix() for s in ext.sources}
        assert folders == EXPECTED_FOLDERS[ext.name], ext.name
        built.update(ext.sources)
    every_source = {f"csrc/{rel(p)}" for p in code_files() if p.suffix in SOURCE_SUFFIXES}
    assert every_source == built  # no source left out of every extension
    embedded = setup_py.kernel_source(str(ROOT))
    assert all(f"/* ---- csrc/{rel(p)} */" in embedded for p in CSRC.rglob("*.cu"))
