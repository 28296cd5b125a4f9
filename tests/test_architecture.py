"""The package's layering rules, checked on its source (docs/development.md,
"Architecture"; docs/architecture.md has the layer table):

* the tree is the layer table: each folder is one layer (``LAYERS``, lowest first), and a
  module imports only from its own layer and the layers below it;
* no import circle among torchtally's Python modules (imports inside functions count: a lazy
  import is still a dependency);
* one exception to both, on purpose: ``Metric.attach`` (base/attachable.py) imports the ignite
  adapter inside the method, as torchmetrics' ``plot()`` imports matplotlib, so that ignite's
  idiom works on torchtally's objects without the core importing an adapter when it loads: a
  function-level import of ``torchtally.adapters.*`` is not counted;
* besides the public faces named after torchmetrics' subpackages, at most
  ``MAX_TOP_LEVEL_MODULES`` modules sit at the top of the package, and no module of a folder is
  named with another's name as a prefix (``sync.py`` beside ``sync_plan.py``: a folder instead);
* no module imports another module's underscore-private name or an underscore-private module
  (the compiled extensions _C, _C_cuda and _nccl are the exception: CPython names them so);
* only Metric's own modules (those defining the classes it is made of) touch a metric's private
  attributes or anyone's ``__dict__``: MetricCollection, the sync and the engines go through
  Metric's documented interface (``hold_states``, ``share_states_of``, ``cached_result``...);
* no Python file over 600 lines (as `ruff format` writes them: one argument per line wherever a
  signature does not fit, about a fifth longer than the hand-wrapped 500 lines this used to be).

The C side (includes, file sizes) is checked in tests/csrc/test_layout.py.
"""

import ast
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "torchtally"
EXTENSIONS = {"_C", "_C_cuda", "_nccl"}
MAX_LINES = 600
MAX_TOP_LEVEL_MODULES = 8
# The domain packages, torchmetrics' subpackages by name (torchtally/classification/accuracy.py
# as torchmetrics/classification/accuracy.py); aggregation is a module, as torchmetrics' is.
DOMAINS = {
    "classification",
    "regression",
    "aggregation",
    "detection",
    "segmentation",
    "retrieval",
    "text",
    "image",
    "audio",
    "clustering",
    "nominal",
    "multimodal",
    "shape",
    "timeseries",
    "video",
    "wrappers",
}
# Wrappers host other metrics; every other domain stands on base/functional/kernels alone.
HOSTS = {"wrappers"}
# Thin modules under torchmetrics' module names for the base classes (torchmetrics.metric,
# torchmetrics.collections): each only re-exports a class of the base layer.
RE_EXPORTS = {"metric", "collections"}
# Lowest first: a module may import from its own layer and the ones before it. A prefix names a
# package (every module under it) or a single top-level module.
LAYERS = [
    ("errors", ["torchtally.errors"]),
    ("utilities", ["torchtally.utilities"]),  # torchmetrics.utilities' helpers: torch only, below everything else
    ("kernels", ["torchtally.kernels", "torchtally._C", "torchtally._C_cuda"]),
    ("functional", ["torchtally.functional"]),
    ("sync", ["torchtally.sync", "torchtally._nccl"]),
    ("base", ["torchtally.base"]),
    ("domains", [f"torchtally.{domain}" for domain in sorted(DOMAINS)] + ["torchtally.decorators"]),
    ("faces", [f"torchtally.{name}" for name in sorted(RE_EXPORTS)] + ["torchtally.nccl", "torchtally.cuda"]),
    ("adapters", ["torchtally.adapters"]),
    ("package", ["torchtally", "torchtally.testing"]),  # these two by exact name only
]
# The one import up the layers (the test docstring says why): module -> the adapter it may import
# inside a function.
EXEMPT = {("torchtally.base.attachable", "torchtally.adapters.ignite")}


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


def _imports(name: str) -> List[Tuple[int, str, List[str], bool]]:
    """(line, imported module, names taken from it, whether inside a function) for every import
    in module `name`."""
    path, package = MODULES[name]
    out = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.append((node.lineno, module, [a.name for a in node.names], in_function))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name, [], in_function) for a in node.names)
        inside = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inside)

    visit(ast.parse(path.read_text()), False)
    return out


def _exempt(importer: str, module: str, in_function: bool) -> bool:
    """The one dependency not counted: Metric.attach's function-level import of the ignite adapter."""
    return in_function and (importer, module) in EXEMPT


def _dependencies(name: str) -> Set[str]:
    """The torchtally modules that module `name` imports (a function-level import of an adapter
    aside): `from pkg import submodule` depends on the submodule, `from module import thing` on
    the module."""
    deps = set()
    for _, module, names, in_function in _imports(name):
        submodules = [n for n in names if f"{module}.{n}" in MODULES or n in EXTENSIONS]
        found = {f"{module}.{n}" for n in submodules}
        if len(submodules) < len(names) or not names:
            found.add(module)
        deps.update(d for d in found if not _exempt(name, d, in_function))
    deps.discard(name)
    return {d for d in deps if d in MODULES or d.rsplit(".", 1)[-1] in EXTENSIONS}


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
        for w in sorted(graph.get(v, ())):
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


def _layer(name: str) -> int:
    """The index in LAYERS of the layer module `name` belongs to (the longest matching prefix; the
    package layer's modules by their exact names, so that a new folder must be given a layer)."""
    best, found = -1, None
    for i, (layer, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            inside = name == prefix or (layer != "package" and name.startswith(prefix + "."))
            if inside and len(prefix) > best:
                best, found = len(prefix), i
    assert found is not None, f"{name} is in no layer: add its folder to LAYERS"
    return found


def test_the_checker_sees_the_package():
    assert "torchtally.base.metric" in MODULES and "torchtally.kernels" in MODULES
    assert "torchtally.kernels" in _dependencies("torchtally.base.placement")
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _layer("torchtally.sync.plan") < _layer("torchtally.base.options") < _layer("torchtally.adapters.hook")
    assert _layer("torchtally.nccl") > _layer("torchtally.sync.nccl") and _layer("torchtally") == len(LAYERS) - 1
    assert _layer("torchtally.utilities.data") < _layer("torchtally.kernels") < _layer("torchtally.base.lists")
    assert _layer("torchtally.base.metric") < _layer("torchtally.metric") == _layer("torchtally.collections")


def test_the_re_export_faces_define_nothing():
    """torchtally.metric and torchtally.collections import one class each and define nothing."""
    for face in sorted(RE_EXPORTS):
        tree = ast.parse(MODULES[f"torchtally.{face}"][0].read_text())
        kinds = {type(node).__name__ for node in tree.body}
        assert kinds <= {"Expr", "ImportFrom", "Assign"}, (face, kinds)
        assert _dependencies(f"torchtally.{face}") <= {"torchtally.base.metric", "torchtally.base.collection"}


def test_utilities_import_nothing_of_torchtally():
    offenders = [
        (name, sorted(d for d in _dependencies(name) if not d.startswith("torchtally.utilities")))
        for name in MODULES
        if name.startswith("torchtally.utilities")
    ]
    assert [o for o in offenders if o[1]] == []


def test_a_module_outside_every_layer_is_refused():
    with pytest.raises(AssertionError, match="in no layer"):
        _layer("torchtally.newfolder.module")


def test_the_adapter_exemption_is_only_for_metric_attachs_function_level_import():
    assert "torchtally.adapters.ignite" not in _dependencies("torchtally.base.attachable")
    assert _exempt("torchtally.base.attachable", "torchtally.adapters.ignite", True)
    assert not _exempt("torchtally.base.attachable", "torchtally.adapters.ignite", False)
    assert not _exempt("torchtally.sync.plan", "torchtally.adapters.ignite", True)
    assert not _exempt("torchtally.base.attachable", "torchtally.adapters.lightning", True)


def test_no_import_circle():
    assert _cycles({name: _dependencies(name) for name in MODULES}) == []


def test_every_module_imports_only_its_own_layer_and_those_below():
    offenders = []
    for name in MODULES:
        for dep in sorted(_dependencies(name)):
            if _layer(dep) > _layer(name):
                offenders.append(f"{name} ({LAYERS[_layer(name)][0]}) imports {dep} ({LAYERS[_layer(dep)][0]})")
    assert offenders == []


def test_the_core_never_imports_an_adapter():
    core = [n for n in MODULES if not n.startswith("torchtally.adapters") and n != "torchtally"]
    offenders = sorted(n for n in core if any(d.startswith("torchtally.adapters") for d in _dependencies(n)))
    assert offenders == []


def test_the_top_level_holds_the_domains_and_few_modules():
    top = sorted(n.split(".")[1] for n in MODULES if n.count(".") == 1 and MODULES[n][0].name != "__init__.py")
    others = [n for n in top if n not in DOMAINS | RE_EXPORTS]
    assert len(others) <= MAX_TOP_LEVEL_MODULES, others
    packages = {n.split(".")[1] for n in MODULES if n.count(".") == 1 and MODULES[n][0].name == "__init__.py"}
    assert {"classification", "regression", "image", "text", "wrappers"} <= packages
    assert "metrics" not in packages  # one tree: torchmetrics', no flat folder of every class
    assert "aggregation" in top  # a module, as torchmetrics.aggregation is


def test_a_domain_imports_no_other_domain_but_the_hosts():
    def domain(module: str) -> str:
        part = module.split(".")[1] if module.count(".") else ""
        return part if part in DOMAINS else ""

    offenders = [
        f"{name} imports {dep}"
        for name in MODULES
        if domain(name) and domain(name) not in HOSTS
        for dep in sorted(_dependencies(name))
        if domain(dep) and domain(dep) != domain(name)
    ]
    assert offenders == []


def test_no_module_in_a_domain_is_named_with_its_domain_as_a_prefix():
    offenders = [
        name
        for name in MODULES
        if name.count(".") >= 2
        and name.split(".")[-2] in DOMAINS
        and name.split(".")[-1].startswith(name.split(".")[-2].rstrip("s"))
    ]
    assert offenders == []


# torchmetrics' own file names that have another's as a prefix: kept, as its paths are the API.
TORCHMETRICS_NAMES = {
    ("precision_recall", "precision_recall_curve"),
    ("specificity", "specificity_sensitivity"),
    ("precision", "precision_recall_curve"),
    ("helper", "helper_embedding_metric"),
}


def _prefix_clashes(names: List[str]) -> List[Tuple[str, str]]:
    return [
        (a, b)
        for a in names
        for b in names
        if a != b and a != "__init__" and b.startswith(a + "_") and (a, b) not in TORCHMETRICS_NAMES
    ]


def test_no_module_is_named_with_another_modules_prefix():
    by_folder: Dict[Path, List[str]] = {}
    for path, _ in MODULES.values():
        if path.name == "__init__.py":  # a package is named in its parent folder
            by_folder.setdefault(path.parent.parent, []).append(path.parent.name)
        else:
            by_folder.setdefault(path.parent, []).append(path.stem)
    offenders = [
        f"{folder.relative_to(PACKAGE.parent)}: {a}, {b}"
        for folder, names in by_folder.items()
        for a, b in _prefix_clashes(names)
    ]
    assert offenders == []
    assert _prefix_clashes(["sync", "sync_plan", "metric", "metrics"]) == [("sync", "sync_plan")]


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__") and part not in EXTENSIONS


def test_no_module_imports_a_private_name():
    offenders = []
    for name in MODULES:
        for line, module, names, _ in _imports(name):
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
        metric.update(
            *(
                (torch.rand(4), torch.tensor([0, 1, 1, 0]))
                if isinstance(metric, BinaryAccuracy)
                else (torch.rand(4, 3), torch.tensor([0, 1, 2, 0]))
            )
        )
        names |= set(vars(metric))
    return own, {n for n in names if _private(n)}


# Reaches into objects that are not metrics.
NOT_A_METRIC = {
    ("torchtally.adapters.ignite", "engine.__dict__")  # the hooks' registry on ignite's Engine
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


def _foreign_classes(name: str, metric_parts: Set[str]) -> List[str]:
    """The source of each class in module `name` that is not one of Metric's own parts (a
    collection's mixin beside Metric's in base/synced.py, CompositionalMetric ...)."""
    text = MODULES[name][0].read_text()
    return [
        ast.get_source_segment(text, node) or ""
        for node in ast.parse(text).body
        if isinstance(node, ast.ClassDef) and node.name not in metric_parts
    ]


def test_only_metric_modules_touch_a_metric_private_state():
    from torchtally import Metric

    own, private_names = _metric_private_names()
    parts = {cls.__name__ for cls in Metric.__mro__}
    assert {"_specs", "_cat_chunks", "_updated", "_cache", "_update_count"} <= private_names
    offenders = [hit for name in MODULES if name not in own for hit in _private_reaches(name, private_names)]
    offenders += [
        hit
        for name in sorted(own)
        for source in _foreign_classes(name, parts)
        for hit in _private_reaches(name, private_names, source)
    ]
    assert offenders == []
    assert any("class SyncedCollection" in s for s in _foreign_classes("torchtally.base.synced", parts))


def test_the_private_state_check_sees_a_reach():
    _, private_names = _metric_private_names()
    reach = "def f(metric):\n    metric.__dict__['_cache'] = None\n    return metric._specs, self._specs\n"
    assert len(_private_reaches("torchtally.base.collection", private_names, reach)) == 2
    assert _private_reaches("torchtally.base.collection", private_names) == []
