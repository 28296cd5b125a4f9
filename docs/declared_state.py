"""The state a metric class declares, read from its source: every ``self.add_state(...)`` call in
the class and its torchtally bases, as written (name, default, reduce).

For the classes the reference site cannot make an instance of (their model is a checkpoint or an
ONNX file that a docs build does not have): their page still lists what they accumulate.
"""

import ast
import inspect
from dataclasses import dataclass
from typing import List


@dataclass
class DeclaredState:
    name: str  # a literal, or the f-string as written
    default: str  # the default's expression as written
    reduce: str
    literal: bool = True  # False: the name is an expression (a variable, an f-string)


def _text(node: ast.AST) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ast.unparse(node)


def _calls_in(cls: type) -> List[DeclaredState]:
    try:
        source = inspect.getsource(inspect.getmodule(cls))  # type: ignore[arg-type]
    except (OSError, TypeError):
        return []
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ClassDef) and node.name == cls.__name__):
            continue
        for call in ast.walk(node):
            func = getattr(call, "func", None)
            if not (isinstance(call, ast.Call) and isinstance(func, ast.Attribute) and func.attr == "add_state"):
                continue
            keywords = {k.arg: k.value for k in call.keywords}
            args = list(call.args) + [None, None, None]
            name = args[0] if args[0] is not None else keywords.get("name")
            default = args[1] if args[1] is not None else keywords.get("default")
            reduce = args[2] if args[2] is not None else keywords.get("reduce", keywords.get("dist_reduce_fx"))
            if name is None:
                continue
            found.append(
                DeclaredState(
                    _text(name),
                    _text(default) if default is not None else "",
                    _text(reduce) if reduce is not None else "sum",
                    isinstance(name, ast.Constant),
                )
            )
    return found


def declared_states(cls: type) -> List[DeclaredState]:
    """Every add_state call of ``cls`` and of its bases inside torchtally, the class's own first."""
    out: List[DeclaredState] = []
    for klass in cls.__mro__:
        if klass.__module__.startswith("torchtally.") and not klass.__module__.startswith("torchtally.base"):
            out += _calls_in(klass)
    return out
