"""Sphinx configuration of torchtally's reference site (`make docs`; warnings are errors).

One page per face (torchtally.classification, .regression, .aggregation) listing its metrics,
one page per metric (autosummary), the engine adapters, the sync and its errors, the GPU path and
the architecture. The examples in the docstrings run as doctests (`make docs` runs the doctest
builder too), so an example that stops working fails the build.
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "docs"))  # metric_facts: the facts on every metric page

from faces import FACES  # noqa: E402  (the faces with a page each: docs/faces.py)

project = "torchtally"
author = "the torchtally developers"
copyright = "the torchtally developers"
release = "0.1.0"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "sphinx.ext.napoleon",
    "myst_parser",
    "metric_facts",
    "offline_math",  # MathJax from the site's own _static: formulas render without a network
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "architecture.md"]  # architecture.md: included by architecture.rst
templates_path = ["_templates"]
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False, "show-inheritance": False}
autodoc_typehints = "signature"
autodoc_member_order = "bysource"
# A docstring's example uses its module's names, as `doctest.testmod` gives them: here every
# public name of the package is in scope.
doctest_global_setup = """
import torch
from torchtally import *
from torchtally.functional import *
from torchtally.classification import *
from torchtally.regression import *
from torchtally.aggregation import *
torch.manual_seed(0)
"""
myst_heading_anchors = 3
# furo (pinned in pyproject's test extra); custom.css widens its column to the examples' 100
# characters and lets a code block scroll rather than cut; render_check.js writes, only when the
# page is opened with ?render-check, whether any block is cut (tests/test_docs_render.py).
html_theme = "furo"
html_title = "torchtally"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_js_files = ["render_check.js"]
suppress_warnings = ["myst.xref_missing"]


# ---- the generated pages: one per face, listing every metric (each then gets its own page) ----


def _write_if_changed(path: str, text: str) -> None:
    if not os.path.exists(path) or open(path).read() != text:
        with open(path, "w") as f:
            f.write(text)


def _face_page(face: str, title: str) -> str:
    import importlib
    import inspect

    module = importlib.import_module(f"torchtally.{face}")
    names = sorted(n for n in module.__all__ if inspect.isclass(getattr(module, n)))
    lines = [
        title,
        "=" * len(title),
        "",
        f".. automodule:: torchtally.{face}",
        "",
        f".. currentmodule:: torchtally.{face}",
        "",
        f".. metric-table:: torchtally.{face}",
        "",
        # autosummary makes the pages and their toctree; its own table repeats the one above
        # with less in it, so custom.css hides it
        ".. container:: autosummary-pages",
        "",
        "   .. autosummary::",
        "      :toctree: generated",
        "      :template: metric.rst",
        "",
        *[f"      {n}" for n in names],
        "",
    ]
    return "\n".join(lines)


def _functional_page() -> str:
    import inspect

    import torchtally.functional as functional

    names = sorted(n for n, v in vars(functional).items() if inspect.isfunction(v) and not n.startswith("_"))
    lines = [
        "Functional forms",
        "================",
        "",
        ".. automodule:: torchtally.functional",
        "",
        ".. currentmodule:: torchtally.functional",
        "",
        ".. autosummary::",
        "   :toctree: generated",
        "",
        *[f"   {n}" for n in names],
        "",
    ]
    return "\n".join(lines)


os.makedirs(os.path.join(ROOT, "docs", "api"), exist_ok=True)
for _face, _title in FACES.items():
    _write_if_changed(os.path.join(ROOT, "docs", "api", f"{_face}.rst"), _face_page(_face, _title))
_write_if_changed(os.path.join(ROOT, "docs", "api", "functional.rst"), _functional_page())


# ---- furo's navigation: the current branch only ----
# furo renders the whole site tree (about 480 pages) into every page's sidebar and then parses
# it again per page: quadratic in pages, most of the html build's time. Collapsed, a page's
# sidebar holds the top-level entries and the branch of the page itself (a metric page: its
# face's classes), which is what furo shows open anyway; other faces open by following them.


def _collapsed_navigation(app: object, pagename: str, templatename: str, context: dict, doctree: object) -> None:
    toctree = context.get("toctree")
    if toctree is None:
        return

    def collapsed(**kwargs: object) -> str:
        kwargs["collapse"] = True
        return toctree(**kwargs)

    context["toctree"] = collapsed


def setup(app: object) -> None:
    # before furo's own html-page-context handler (priority 500), which builds the sidebar
    app.connect("html-page-context", _collapsed_navigation, priority=400)  # type: ignore[attr-defined]
