"""Run the docstring examples of every module of a package (doctest.testmod on each)."""

import doctest
import importlib
import pkgutil
from typing import Tuple


def package_doctests(package: str) -> Tuple[int, int]:
    """(failed, attempted) over every module of `package` and the package itself."""
    root = importlib.import_module(package)
    names = [package] + [f"{package}.{info.name}" for info in pkgutil.iter_modules(getattr(root, "__path__", []))]
    # the names the reference site's doctests start with (docs/conf.py): torch and every public name
    scope = {"torch": importlib.import_module("torch")}
    for public in ("torchtally", "torchtally.functional", root.__name__):
        scope.update({k: v for k, v in vars(importlib.import_module(public)).items() if not k.startswith("_")})
    failed = attempted = 0
    for name in names:
        module = importlib.import_module(name)
        result = doctest.testmod(module, extraglobs=scope, optionflags=doctest.ELLIPSIS)
        failed, attempted = failed + result.failed, attempted + result.attempted
    return failed, attempted
