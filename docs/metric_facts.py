"""Sphinx extension of torchtally's reference site: the facts of a metric, read off the class.

``.. metric-facts:: torchtally.classification.MulticlassAccuracy`` (in every metric's page,
docs/_templates/metric.rst) writes its formula (docs/formulas.py), its constructor arguments
(signature: type and default; what each does from the docstring or docs/metric_notes.py), the
inputs of ``update`` and what ``compute`` returns, its state (introspected from an instance:
name, reduce, dtype, shape, bytes) with the collectives one sync makes (torchtally's own sync
plan, built from that state), and the differences from torchmetrics (docs/differences/) that name it.

``.. metric-table:: torchtally.classification`` (in every domain page) lists the domain's
classes: one-line summary, state bytes and collectives per sync.

Each class is introspected once per build (``facts``, cached), so the two directives share it.
"""

import functools
import importlib
import inspect
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import compute_results
import formulas
import metric_notes
import stand_ins
from declared_state import DeclaredState, declared_states
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Constructor arguments that instances are made with when the signature requires them (the
# values tests/support/metric_catalogue.py uses).
MAKE_WITH = {
    "num_classes": 3,
    "num_labels": 3,
    "num_groups": 2,
    "beta": 1.0,
    "min_recall": 0.5,
    "min_precision": 0.5,
    "min_specificity": 0.5,
    "min_sensitivity": 0.5,
    "threshold": 0.5,
    "p": 2.0,
}


@dataclass
class StateRow:
    name: str
    reduce: str
    dtype: str
    shape: str
    nbytes: int  # a fixed state's bytes, or a cat / merge state's bytes per row
    per_row: bool

    @property
    def unit(self) -> str:
        """What ``nbytes`` counts: a cat state grows by a row per sample (or item), a merge state
        holds rows that the metric's own merge combines (Chan moments), not one per sample."""
        if not self.per_row:
            return ""
        return " per merge row" if self.reduce.startswith("merge") else " per sample"


@dataclass
class Facts:
    cls: type
    made_with: Dict[str, Any] = field(default_factory=dict)
    made_text: str = ""  # how the instance was made, where made_with does not say it (a stand-in)
    states: Optional[List[StateRow]] = None  # None: no instance could be made without data
    why_no_states: str = ""
    collectives: Optional[int] = None
    sync_text: str = ""
    # a task wrapper (Accuracy): the facts of the class each task builds; a collection of metrics
    # (MetricTracker, FeatureShare): the facts of each member
    parts: List[Tuple[str, "Facts"]] = field(default_factory=list)
    task_wrapper: bool = False  # parts are the classes ``task`` picks (else: a collection's members)
    declared: List[DeclaredState] = field(default_factory=list)  # no instance: add_state as written

    @property
    def fixed_bytes(self) -> int:
        return sum(s.nbytes for s in self.states or () if not s.per_row)

    def bytes_text(self) -> str:
        if self.parts and self.states is None:
            return "; ".join(f"{label.split(':')[0]}: {part.bytes_text()}" for label, part in self.parts)
        if self.states is None:
            return "depends on arguments"
        per_unit: Dict[str, int] = {}
        for s in self.states:
            if s.per_row:
                per_unit[s.unit] = per_unit.get(s.unit, 0) + s.nbytes
        parts = [f"{self.fixed_bytes} B"] if self.fixed_bytes or not per_unit else []
        parts += [f"{n} B{unit}" for unit, n in per_unit.items()]
        return " + ".join(parts)


def _type_text(annotation: Any) -> str:
    if annotation is inspect.Parameter.empty:
        return ""
    text = annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)
    return text.replace("torch.", "").replace("typing.", "")


def _dtype_text(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def _state_rows(metric: Any) -> List[StateRow]:
    rows = []
    for name in metric.state_names:
        reduce = metric.state_reduce(name)
        default = metric.state_default(name)
        if not hasattr(default, "dtype"):  # a list state (torchmetrics' default=[]): rows of any shape
            rows.append(StateRow(name, f"{reduce} (list)", "any", "[items]", 0, True))
            continue
        per_row = reduce in ("cat", "merge")
        shape = ("N",) + tuple(default.shape[1:]) if per_row else tuple(default.shape)
        dims = default.shape[1:] if per_row else default.shape
        numel = 1
        for d in dims:
            numel *= int(d)
        shape_text = "[" + ", ".join(str(d) for d in shape) + "]"
        rows.append(
            StateRow(name, reduce, _dtype_text(default.dtype), shape_text, numel * default.element_size(), per_row)
        )
    return rows


def _sync_cost(metric: Any) -> Tuple[int, str]:
    """Collectives of one sync of this metric alone, and how they split (torchtally's plan)."""
    from torchtally.sync.plan import FIXED_REDUCES, SyncPlan, transport_dtype

    specs = metric.state_specs()
    plan = SyncPlan(specs)
    if not specs:
        return 0, "no state: nothing to sync"
    if plan.small is not None:
        return 1, "1 all_gather of the 4 KiB header, which carries the states themselves (a small plan)"
    groups = sorted({(_dtype_text(transport_dtype(s.dtype)), s.reduce) for s in specs if s.reduce in FIXED_REDUCES})
    var = [s for s in specs if s.reduce not in FIXED_REDUCES]
    parts = ["1 header all_gather (plan fingerprint and the length of every cat state)"]
    parts += [f"1 all_reduce ({op}) of the {dt} states" for dt, op in groups]
    if var:
        parts.append("1 padded all_gather of every cat / merge state, trimmed by the header's lengths")
    return plan.collectives_per_sync, "; ".join(parts)


TASKS = ("binary", "multiclass", "multilabel")


def _introspect(out: Facts, metric: Any) -> None:
    """Fill ``out`` from an instance: its states and sync cost, or its members' (a collection)."""
    if hasattr(metric, "state_names"):
        out.states = _state_rows(metric)
        out.collectives, out.sync_text = _sync_cost(metric)
        return
    members = metric.items() if hasattr(metric, "items") else enumerate(metric)
    for key, member in members:
        part = Facts(type(member))
        _introspect(part, member)
        kind = type(member).__name__
        out.parts.append((kind if key == kind else f"{key}: {kind}", part))


def _task_parts(cls: type, params: Any) -> List[Tuple[str, Facts]]:
    """A task wrapper's classes: for every task it accepts, the facts of the instance it builds."""
    parts = []
    for task in TASKS:
        kwargs = {n: v for n, v in MAKE_WITH.items() if n in params and params[n].default in (None, params[n].empty)}
        try:
            metric = cls(task=task, **kwargs)
        except Exception:  # a task the wrapper does not offer
            continue
        made = {k: v for k, v in kwargs.items() if k in inspect.signature(type(metric)).parameters}
        part = Facts(type(metric), made_with=made)
        _introspect(part, metric)
        parts.append((f'task="{task}": {type(metric).__name__}', part))
    return parts


@functools.cache
def facts(path: str) -> Facts:
    module_name, _, name = path.rpartition(".")
    cls = getattr(importlib.import_module(module_name), name)
    out = Facts(cls)
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        params = {}  # type: ignore[assignment]
    if "task" in params and params["task"].default is inspect.Parameter.empty:
        out.parts, out.task_wrapper = _task_parts(cls, params), True
        out.why_no_states = "a task wrapper: ``task`` picks the class it builds"
        return out
    required = [
        p for p in params.values() if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    stand_in = stand_ins.STAND_INS.get(name)
    missing = [p.name for p in required if p.name not in MAKE_WITH]
    # the catalogue's values also for arguments whose default (None) the class refuses
    out.made_with = {
        n: v for n, v in MAKE_WITH.items() if n in params and params[n].default in (None, inspect.Parameter.empty)
    }
    try:
        if stand_in is not None:
            kwargs, out.made_text = stand_in[0](), stand_in[1]
            metric = cls(**{k: v for k, v in out.made_with.items() if k not in kwargs}, **kwargs)
        elif missing:
            raise TypeError(f"the required argument(s) {', '.join(missing)}")
        else:
            metric = cls(**out.made_with)
        _introspect(out, metric)
    except Exception as e:  # a class whose model is a checkpoint or a file the docs build has not
        out.states, out.parts, out.made_text = None, [], ""
        out.why_no_states = f"no instance without a model or data ({type(e).__name__})"
        out.declared = declared_states(cls)
    return out


# ---- the docstring: first sentence, what it says about an argument ----


def _balanced(text: str) -> bool:
    return text.count("``") % 2 == 0 and text.count("(") == text.count(")")


def summary(cls: type) -> str:
    return summary_of(inspect.getdoc(cls) or "")


def summary_of(doc: str) -> str:
    first = doc.split("\n\n")[0].replace("\n", " ").strip()
    for m in re.finditer(r"\.(\s|$)", first):  # the first sentence that ends outside code and brackets
        if _balanced(first[: m.start()]):
            return first[: m.start()] + "."
    return first


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Keyword Args|Returns|Raises|Example|Examples):\s*$")


def _documented_args(doc: str) -> Dict[str, str]:
    """A Google-style ``Args:`` section's entries: name -> text (continuation lines joined)."""
    out: Dict[str, str] = {}
    inside, current = False, ""
    for line in doc.splitlines():
        stripped = line.strip()
        if _SECTION.match(stripped):
            inside, current = stripped.startswith(("Args", "Arguments", "Parameters", "Keyword")), ""
            continue
        if not inside:
            continue
        if not stripped:
            current = ""
            continue
        m = re.match(r"^\s{2,}(\*{0,2}\w+)(?:\s*\([^)]*\))?:\s*(.*)$", line)
        if m and (not current or len(line) - len(line.lstrip()) <= out.get("__indent__", 99)):
            current = m.group(1).lstrip("*")
            out[current] = m.group(2)
            out.setdefault("__indent__", len(line) - len(line.lstrip()))  # type: ignore[arg-type]
        elif current:
            out[current] += " " + stripped
        elif not line.startswith(" "):
            inside = False
    out.pop("__indent__", None)
    return out


def _prose(doc: str) -> str:
    """The docstring's paragraphs without its sections and examples, as one line."""
    kept, skipping = [], False
    for para in doc.split("\n\n"):
        head = para.strip().splitlines()[0] if para.strip() else ""
        if _SECTION.match(head.strip()):
            skipping = True
        elif not para.startswith(" "):
            skipping = False
        if not skipping and ">>>" not in para:
            kept.append(para)
    return " ".join(kept).replace("\n", " ")


def _sentences_naming(doc: str, arg: str, said_before: set) -> str:
    """What the docstring says of ``arg``: its ``Args:`` entry, else the first short sentence of the
    prose that names it and that no earlier argument's row shows already (nor the summary)."""
    documented = _documented_args(doc).get(arg)
    if documented:
        return documented if _balanced(documented) else ""
    first = summary_of(doc)
    for sentence in re.split(r"(?<=[.;])\s+|\s\*\s", _prose(doc)):
        sentence = re.sub(r"\s+", " ", sentence.strip().lstrip("* "))
        if sentence in said_before or sentence in first or len(sentence) > 250 or not _balanced(sentence):
            continue
        if re.search(rf"``{arg}``|\b{arg}\b(?=[ :=(])", sentence):
            said_before.add(sentence)
            return sentence
    return ""


def _cell(text: str) -> str:
    return text.replace("\n", " ") or "\\-"


# ---- the differences from torchmetrics (docs/differences/<domain>.md) ----


def _md_to_rst(text: str) -> str:
    text = text.replace("*", "\\*")
    return re.sub(r"`([^`]+)`", r"``\1``", text)


@functools.lru_cache(maxsize=1)
def _difference_rows() -> List[List[str]]:
    """Every row of the differences tables, one page per domain (general first)."""
    folder = os.path.join(ROOT, "docs", "differences")
    pages = sorted(os.listdir(folder), key=lambda f: (f != "general.md", f)) if os.path.isdir(folder) else []
    rows = []
    for page in pages:
        inside = False
        for line in open(os.path.join(folder, page), encoding="utf-8"):
            if line.startswith("| | torchmetrics | torchtally | why |"):
                inside = True
                continue
            if inside:
                if not line.startswith("|"):
                    inside = False
                    continue
                cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
                if len(cells) == 4 and not cells[0].startswith("---"):
                    rows.append(cells)
    return rows


def _stem(name: str) -> str:
    for prefix in ("Binary", "Multiclass", "Multilabel"):
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix) :]
    return name


def differences(cls: type) -> List[List[str]]:
    """The differences rows whose first cell names the class, its stem (AUROC for BinaryAUROC) or its
    task family (multiclass, binary, multilabel)."""
    name = cls.__name__
    words = {name, _stem(name)}
    task = name[: len(name) - len(_stem(name))].lower()
    found = []
    for row in _difference_rows():
        head = row[0]
        names_it = any(re.search(rf"(?<![A-Za-z]){re.escape(w)}(?![a-z])", head) for w in words)
        # a row on the task ("multiclass `num_classes`"), unless it is about another class
        other_class = re.search(r"\b[A-Z][a-z]+[A-Z]\w*", head)
        on_task = task and re.search(rf"\b{task}\b", head, re.IGNORECASE) and not other_class
        if names_it or on_task:
            found.append(row)
    return found


# ---- the directives ----


def _list_table(header: List[str], rows: List[List[str]], widths: str = "") -> List[str]:
    lines = [".. list-table::", "   :header-rows: 1"]
    if widths:
        lines.append(f"   :widths: {widths}")
    lines.append("")
    for row in [header] + rows:
        lines.append(f"   * - {_cell(row[0])}")
        lines += [f"     - {_cell(c)}" for c in row[1:]]
    return lines + [""]


def _arguments(cls: type, doc: str) -> List[List[str]]:
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return []
    rows, said_before = [], set()
    for p in params:
        if p.kind == p.VAR_POSITIONAL:
            continue
        label = f"``**{p.name}``" if p.kind == p.VAR_KEYWORD else f"``{p.name}``"
        default = "required" if p.default is p.empty else f"``{p.default!r}``"
        if p.kind == p.VAR_KEYWORD:
            default = ""
        said = _sentences_naming(doc, p.name, said_before) if p.kind != p.VAR_KEYWORD else ""
        note = metric_notes.argument_note(
            cls.__name__, _stem(cls.__name__), "kwargs" if p.kind == p.VAR_KEYWORD else p.name
        )
        if note and said and note[:25] in said:  # the docstring says it already
            note = ""
        what = "; ".join(x for x in (note, said) if x)  # the shared meaning, then what this class adds
        rows.append([label, f"``{_type_text(p.annotation)}``" if p.annotation is not p.empty else "", default, what])
    return rows


def _update_rows(cls: type) -> List[List[str]]:
    described = dict(metric_notes.update_inputs(cls.__name__, cls.__module__))
    try:
        params = list(inspect.signature(cls.update).parameters.values())[1:]
    except (TypeError, ValueError, AttributeError):
        return []
    rows = []
    for p in params:
        star = "*" if p.kind == p.VAR_POSITIONAL else "**" if p.kind == p.VAR_KEYWORD else ""
        kind = f"``{_type_text(p.annotation)}``" if p.annotation is not p.empty else ""
        default = "" if p.default is p.empty else f"``{p.default!r}``"
        rows.append([f"``{star}{p.name}``", kind, default, described.get(p.name, "")])
    return rows


def _state_lines(f: Facts, name: str) -> List[str]:
    """The state section: the instance's states and sync cost; a task wrapper's or a collection's
    parts, each with its own; or, with no instance, the states as the source declares them."""
    if f.parts:
        intro = (
            "``task`` picks the class this wrapper builds; the state is that class's:"
            if f.task_wrapper
            else "Its members, each with its own state (synced together in one plan"
            + (f"; here {f.made_text}" if f.made_text else "")
            + "):"
        )
        lines = [intro, ""]
        for label, part in f.parts:
            lines += [f"*{label}*", ""] + _state_lines(part, part.cls.__name__)
        return lines
    if f.states is None:
        if not f.declared:
            return [f"No state is declared ({f.why_no_states}).", ""]
        rows = [
            [f"``{d.name}``" + ("" if d.literal else " (a name computed there)"), d.reduce, f"``{d.default}``"]
            for d in f.declared
        ]
        return [
            f"Not introspected: {f.why_no_states}. The states as the class declares them "
            "(their width follows the model):",
            "",
        ] + _list_table(["state", "reduce", "default as declared"], rows, "30 14 56")
    made = f.made_text or ", ".join(f"{k}={v!r}" for k, v in f.made_with.items())
    if not f.states:
        return [f"``{name}`` keeps no state: nothing is synced.", ""]
    head = f"States of ``{name}`` ({f.made_text})" if f.made_text else f"States of ``{name}({made})``"
    lines = [head + " (bytes: a fixed state's; a cat state's per sample; a merge state's per row):", ""]
    rows = [[f"``{s.name}``", s.reduce, s.dtype, s.shape, f"{s.nbytes}{s.unit}"] for s in f.states]
    lines += _list_table(["state", "reduce", "dtype", "shape", "bytes"], rows)
    return lines + [
        f"One sync of this metric alone: **{f.collectives} collective(s)**: {f.sync_text}. "
        "In a MetricCollection its states share these collectives with every other member's.",
        "",
    ]


def page_lines(path: str) -> List[str]:
    """The reStructuredText of a metric page's facts (``path``: the class's dotted path)."""
    f = facts(path)
    cls, doc = f.cls, inspect.getdoc(f.cls) or ""
    lines: List[str] = []

    formula = formulas.formula(cls.__name__)
    if formula:
        lines += ["**Formula**", "", ".. math::", "", *[f"   {x}" for x in formula.splitlines()], ""]

    lines += ["**Arguments**", ""]
    args = _arguments(cls, doc)
    lines += _list_table(["argument", "type", "default", "what it does"], args, "18 22 14 46") if args else ["\\-", ""]

    lines += ["**update** (one batch; returns the metric)", ""]
    task_wrapper = f.task_wrapper
    # a task wrapper's update and compute are those of the class it builds (the first task's here)
    built = f.parts[0][1].cls if task_wrapper else cls
    updates = _update_rows(built)
    if task_wrapper:
        lines += [f"The inputs of the class ``task`` builds, e.g. ``{built.__name__}``:", ""]
    lines += _list_table(["input", "type", "default", "shape and values"], updates, "14 22 10 54") if updates else []
    ret = compute_results.returns(cls.__name__, cls.__module__)
    if task_wrapper:
        ret = "what the class ``task`` builds returns: " + ret
    try:
        annotation = _type_text(inspect.signature(built.compute).return_annotation)
    except (TypeError, ValueError, AttributeError):
        annotation = ""
    annotation = "" if annotation in ("None", "Any") else annotation
    lines += [
        "**compute** returns " + (f"``{annotation}``" if annotation else "the value") + (f": {ret}" if ret else "."),
        "",
    ]

    lines += ["**State and sync**", ""] + _state_lines(f, cls.__name__)

    diffs = differences(cls)
    lines += ["**Differences from torchmetrics**", ""]
    if diffs:
        rows = [[_md_to_rst(c) for c in row] for row in diffs]
        lines += _list_table(["case", "torchmetrics", "torchtally", "why"], rows, "16 28 36 20")
    lines += [
        "The differences shared by every metric (int64 / float64 accumulators, no gradient, bad input always "
        "raising, ...) are on :doc:`/differences/general`.",
        "",
    ]
    return lines


def _page_sources(cls: type) -> List[str]:
    here = os.path.join(ROOT, "docs")
    tables = [os.path.join(here, f) for f in sorted(os.listdir(here)) if f.endswith(".py") and f != "conf.py"]
    folder = os.path.join(here, "differences")
    tables += [os.path.join(folder, f) for f in sorted(os.listdir(folder))] if os.path.isdir(folder) else []
    try:
        tables.append(inspect.getsourcefile(cls) or "")
    except TypeError:
        pass
    return [t for t in tables if t]


class MetricFacts(SphinxDirective):
    required_arguments = 1

    def run(self) -> List[nodes.Node]:
        # an incremental build re-reads the page when what it is made of changes: the tables in
        # docs/ and the class's own module (autodoc notes the latter for the docstring only)
        for dependency in _page_sources(facts(self.arguments[0]).cls):
            self.env.note_dependency(dependency)
        return self._parsed(page_lines(self.arguments[0]))

    def _parsed(self, lines: List[str]) -> List[nodes.Node]:
        container = nodes.container(classes=["metric-facts"])
        self.state.nested_parse(StringList(lines, source=self.arguments[0]), self.content_offset, container)
        return [container]


class MetricTable(SphinxDirective):
    required_arguments = 1

    def run(self) -> List[nodes.Node]:
        module = importlib.import_module(self.arguments[0])
        names = sorted(n for n in module.__all__ if inspect.isclass(getattr(module, n)))
        rows = []
        for n in names:
            f = facts(f"{module.__name__}.{n}")
            collectives = "" if f.collectives is None else str(f.collectives)
            rows.append([f":class:`{n} <{module.__name__}.{n}>`", summary(f.cls), f.bytes_text(), collectives])
        lines = _list_table(["class", "summary", "state bytes", "collectives per sync"], rows, "26 50 14 10")
        container = nodes.container(classes=["metric-table"])
        self.state.nested_parse(StringList(lines, source=self.arguments[0]), self.content_offset, container)
        return [container]


def setup(app: Any) -> Dict[str, Any]:
    app.add_directive("metric-facts", MetricFacts)
    app.add_directive("metric-table", MetricTable)
    return {"parallel_read_safe": True, "version": "1"}
