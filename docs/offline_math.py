"""Sphinx extension: the formulas render without a network.

Sphinx's math renderer loads MathJax from a CDN by default, so a site built or read offline shows
raw LaTeX. The PyPI package sphinx-mathjax-offline (pinned in pyproject's test extra) vendors
MathJax 3; this extension points ``mathjax_path`` at a copy of it in the site's ``_static`` and
copies the part the TeX-to-HTML renderer loads (the combined script, its fonts and the TeX
extensions it loads on demand), once: an unchanged file is not copied again. The package's own
``setup`` does the same but copies every bundle it has (24 MB) on every build and does not say it
is safe for Sphinx's parallel build (-j auto), which ``-W`` turns into an error.
"""

import filecmp
import importlib.util
import os
import shutil
from typing import Any, Dict, Optional

SCRIPT = "tex-chtml.js"
# what tex-chtml.js loads at run time: fonts (output/), TeX extensions (input/), the context
# menu and its accessibility modules (ui/, a11y/), the DOM adaptors
FOLDERS = ("output", "input", "ui", "a11y", "adaptors")


def vendored_mathjax() -> str:
    """The package's MathJax folder; an error naming the package when it is not installed."""
    spec = importlib.util.find_spec("sphinx-mathjax-offline")
    if spec is None or spec.origin is None:
        raise RuntimeError("the docs need sphinx-mathjax-offline (pip install -e '.[test]')")
    return os.path.join(os.path.dirname(spec.origin), "static", "mathjax")


def _copy(src: str, dst: str) -> None:
    if os.path.exists(dst) and filecmp.cmp(src, dst, shallow=True):
        return
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(src, dst)


def _copy_mathjax(app: Any, exception: Optional[BaseException]) -> None:
    if exception is not None or app.builder.format != "html":
        return
    source = vendored_mathjax()
    target = os.path.join(app.outdir, "_static", "mathjax")
    _copy(os.path.join(source, SCRIPT), os.path.join(target, SCRIPT))
    for folder in FOLDERS:
        for here, _, files in os.walk(os.path.join(source, folder)):
            relative = os.path.relpath(here, source)
            for name in files:
                _copy(os.path.join(here, name), os.path.join(target, relative, name))


def setup(app: Any) -> Dict[str, Any]:
    vendored_mathjax()  # fail at once, not after the build, when the package is missing
    app.config.mathjax_path = "mathjax/" + SCRIPT
    app.connect("build-finished", _copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
