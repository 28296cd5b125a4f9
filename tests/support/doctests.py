"""Run the docstring examples of every module of a package (doctest.testmod on each)."""

import doctest
import importlib
import pkgutil
from typing import Tuple


def package_doctests(package: str) -> Tuple[int, int]:
    """(failed, attempted) over every module of `package` and the package itself."""
    root = importlib.import_module(package)
    names = [package] + [f"{package}.{info.name}" for info in pkgutil.iter_modules(getattr(root, "__path__", []))]
    failed = attempted = 0
    for name in names:
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
        failed, attempted = failed + result.failed, attempted + result.attempted
    return failed, attempted
