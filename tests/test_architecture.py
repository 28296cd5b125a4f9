"""The package's layering rules, checked on its source (README, "Architecture"):

* no import circle among torchtally's Python modules (imports inside functions count: a lazy
  import is still a dependency);
* no module imports another module's underscore-private name or an underscore-private module
  (the compiled extensions _C, _C_cuda and _nccl are the exception: CPython names them so);
* only Metric's own modules (those defining the classes it is made of) touch a metric's private
  attributes or anyone's ``__dict__``: MetricCollection, the sync and the engines go through
  Metric's documented interface (``hold_states``, ``share_states_of``, ``cached_result``...);
* no Python file over 500 lines.

The C side (includes, file sizes) is checked in tests/csrc/test_layout.py.
"""
import ast
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "torchtally"
EXTENSIONS = {"_C", "_C_cuda", "_nccl"}
MAX_LINES = 500


def _modules() -> Dict[str, Tuple[Path, List[str]]]:
    """Dotted module name -> (file, the package its relative imports start from)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
            package = parts
        else:
            package = parts[:-1]
        found[".".join(parts)] = (path, package)
    return found


MODULES = _modules()


def _imports(name: str) -> List[Tuple[int, str, List[str]]]:
    """(line, imported module, names taken from it) for every import in module `name`."""
    path, package = MODULES[name]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.append((node.lineno, module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name, []) for a in node.names)
    return out


def _dependencies(name: str) -> Set[str]:
    """The torchtally modules that module `name` imports: `from pkg import submodule` depends on
    the submodule, `from module import thing` on the module."""
    deps = set()
    for _, module, names in _imports(name):
        submodules = [n for n in names if f"{module}.{n}" in MODULES or n in EXTENSIONS]
        deps.update(f"{module}.{n}" for n in submodules)
        if len(submodules) < len(names) or not names:
            deps.add(module)
    deps.discard(name)
    return {d for d in deps if d in MODULES}


def _cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    components: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return components


def test_the_checker_sees_the_package():
    assert "torchtally.metric" in MODULES and "torchtally.kernels" in MODULES
    assert "torchtally.kernels" in _dependencies("torchtally.metric_placement")
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circle():
    assert _cycles({name: _dependencies(name) for name in MODULES}) == []


def test_the_core_never_imports_an_adapter():
    core = [n for n in MODULES if not n.startswith("torchtally.adapters") and n != "torchtally"]
    offenders = sorted(n for n in core if any(d.startswith("torchtally.adapters") for d in _dependencies(n)))
    assert offenders == []


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__") and part not in EXTENSIONS


def test_no_module_imports_a_private_name():
    offenders = []
    for name in MODULES:
        for line, module, names in _imports(name):
            if not module.startswith("torchtally"):
                continue
            taken = [n for n in names if _private(n)] + [p for p in module.split(".") if _private(p)]
            if taken:
                offenders.append(f"{name}:{line} imports {', '.join(taken)} from {module}")
    assert offenders == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_python_file_over_the_limit(name):
    path = MODULES[name][0]
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE.parent)}: {lines} lines"


def _metric_private_names() -> Tuple[Set[str], Set[str]]:
    """(the modules Metric is made of, the private attribute names a metric has)."""
    import torch

    from torchtally import Metric
    from torchtally.classification import BinaryAccuracy, MulticlassAUROC

    own = {cls.__module__ for cls in Metric.__mro__ if cls.__module__.startswith("torchtally")}
    names = {n for cls in Metric.__mro__ if cls.__module__.startswith("torchtally") for n in vars(cls)}
    for metric in (BinaryAccuracy(), MulticlassAUROC(3, thresholds=None)):
        metric.update(*((torch.rand(4), torch.tensor([0, 1, 1, 0])) if isinstance(metric, BinaryAccuracy)
                        else (torch.rand(4, 3), torch.tensor([0, 1, 2, 0]))))
        names |= set(vars(metric))
    return own, {n for n in names if _private(n)}


# Reaches into objects that are not metrics.
NOT_A_METRIC = {
    ("torchtally.adapters.ignite", "engine.__dict__"),  # the hooks' registry on ignite's Engine
}


def _private_reaches(name: str, private_names: Set[str], source: str = "") -> List[str]:
    """Where module `name` (or `source`, given as its text) reads or writes a private metric
    attribute, or ``__dict__``, of an object other than self / cls / super()."""
    path = MODULES[name][0]
    found = []
    for node in ast.walk(ast.parse(source or path.read_text())):
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
            continue
        if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id in ("super", "type"):
            continue
        if isinstance(owner, ast.Name) and owner.id[:1].isupper():  # a class's own attribute
            continue
        if (name, ast.unparse(node)) in NOT_A_METRIC:
            continue
        if node.attr == "__dict__" or node.attr in private_names:
            found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    return found


def test_only_metric_modules_touch_a_metric_private_state():
    own, private_names = _metric_private_names()
    assert {"_specs", "_cat_chunks", "_updated", "_cache", "_update_count"} <= private_names
    offenders = [hit for name in MODULES if name not in own for hit in _private_reaches(name, private_names)]
    assert offenders == []


def test_the_private_state_check_sees_a_reach():
    _, private_names = _metric_private_names()
    reach = "def f(metric):\n    metric.__dict__['_cache'] = None\n    return metric._specs, self._specs\n"
    assert len(_private_reaches("torchtally.collection", private_names, reach)) == 2
    assert _private_reaches("torchtally.collection", private_names) == []
