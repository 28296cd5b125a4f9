"""The reference site as a reader sees it: the index and MulticlassAccuracy's page rendered by
headless Chromium at a laptop's width (1280 x 900). `make test` builds the site (`make docs`)
before pytest runs; this test reads docs/_build/html and fails, saying so, when it is missing.

docs/_static/render_check.js, active only when a page is opened with ``?render-check``, writes
what the layout came to into the page (a JSON script element); the test reads it from Chromium's
--dump-dom. It checks that no code block is cut (every block fits or scrolls inside itself), that
the column holds a 100-character example line, and that the metric page has its arguments table,
its formula, its state and sync cost and its example. Chromium runs with no network (every
host unresolvable, a dead proxy): the formulas must render as math from the site's own copy of
MathJax (docs/offline_math.py), not as raw TeX. A screenshot of each page is saved under
pytest's tmp_path (to look at by eye).
"""

import html
import json
import os
import re
import shutil
import subprocess
import sys
from typing import Any, Dict

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HTML = os.path.join(ROOT, "docs", "_build", "html")
METRIC_PAGE = os.path.join("api", "generated", "torchtally.classification.MulticlassAccuracy.html")
WINDOW = "1280,900"


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail(
        "headless Chromium is needed to render the docs: `make test` installs Debian's chromium as root "
        "with apt-get; it could not be installed here (apt-get install chromium)"
    )


def _page(relative: str) -> str:
    path = os.path.join(HTML, relative)
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing: run `make docs` first (`make test` does)")
    return path


def _chromium_args(tmp_path: Any, *extra: str) -> list:
    return [
        _chromium(),
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--window-size={WINDOW}",
        "--virtual-time-budget=3000",
        # no network: what the page needs must come from the built site itself
        "--proxy-server=http://127.0.0.1:9",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        *extra,
    ]


def _render(relative: str, tmp_path: Any) -> Dict[str, Any]:
    url = "file://" + _page(relative) + "?render-check"
    out = subprocess.run(_chromium_args(tmp_path, "--dump-dom", url), capture_output=True, text=True, timeout=120)
    m = re.search(r'<script type="application/json" id="render-check-result">(.*?)</script>', out.stdout, re.S)
    assert m, f"render_check.js wrote no result for {relative}: {out.stderr[-2000:]}"
    report = json.loads(m.group(1))
    report["dom"] = out.stdout
    return report


def _screenshot(relative: str, tmp_path: Any) -> str:
    png = str(tmp_path / (os.path.basename(relative).replace(".html", "") + ".png"))
    url = "file://" + _page(relative)
    subprocess.run(_chromium_args(tmp_path, f"--screenshot={png}", url), capture_output=True, timeout=120)
    return png


def test_index_renders_with_code_not_cut(tmp_path: Any) -> None:
    report = _render("index.html", tmp_path)
    assert report["pre_blocks"] >= 1
    assert report["cut_blocks"] == 0, report
    png = _screenshot("index.html", tmp_path)
    assert os.path.getsize(png) > 10_000, png


def test_metric_page_has_arguments_formula_state_and_uncut_example(tmp_path: Any) -> None:
    report = _render(METRIC_PAGE, tmp_path)
    dom = report.pop("dom")
    assert report["cut_blocks"] == 0, report
    # the example's lines (up to 100 characters) fit the column at 1280 px: no scrolling needed
    assert report["hundred_chars_px"] > 0 and report["narrowest_pre_px"] >= report["hundred_chars_px"], report
    assert report["parameters_table"], "MulticlassAccuracy's page lists no arguments table"
    assert report["math_blocks"] >= 1, "MulticlassAccuracy's page shows no formula"
    # offline, the formulas are typeset by MathJax (an mjx-container each), none left as raw TeX
    assert report["typeset_math_blocks"] == report["math_blocks"] and report["raw_tex_blocks"] == 0, report
    assert ">&gt;&gt;&gt;" in dom or "&gt;&gt;&gt; " in dom, "the page shows no example"
    for text in ("num_classes", "top_k", "ignore_index", "confmat", "collective", "Differences from torchmetrics"):
        assert text in dom, f"MulticlassAccuracy's page does not mention {text!r}"
    png = _screenshot(METRIC_PAGE, tmp_path)
    assert os.path.getsize(png) > 10_000, png


def test_pages_load_no_script_or_style_from_the_network() -> None:
    """Every page's scripts and style sheets are the site's own files (MathJax included)."""
    remote = re.compile(r"<(?:script|link)\b[^>]*(?:src|href)=\"(?:https?:)?//[^\"]*\"")
    pages = [os.path.join(here, f) for here, _, files in os.walk(HTML) for f in files if f.endswith(".html")]
    assert len(pages) > 200, f"{HTML} holds {len(pages)} pages: run `make docs` first"
    offenders = {}
    for page in pages:
        found = remote.findall(open(page, encoding="utf-8").read())
        if found:
            offenders[os.path.relpath(page, HTML)] = found[:2]
    assert not offenders, f"pages that load from the network: {dict(list(offenders.items())[:5])}"
    assert os.path.exists(os.path.join(HTML, "_static", "mathjax", "tex-chtml.js")), "MathJax is not in the site"


def test_every_formula_typesets_offline(tmp_path: Any) -> None:
    """All of docs/formulas.py on one page, typeset by the site's own MathJax with no network: none
    is left as raw TeX, none is a TeX error, and no macro shows up as text (a backslash in the
    rendered text: \\_ inside \\text, say)."""
    sys.path.insert(0, os.path.join(ROOT, "docs"))
    import formulas

    static = os.path.dirname(_page(os.path.join("_static", "mathjax", "tex-chtml.js")))
    blocks = "".join(f'<div class="math">\\[{html.escape(tex)}\\]</div>' for tex in formulas.FORMULAS.values())
    page = tmp_path / "formulas.html"
    page.write_text(
        f'<html><head><script defer src="file://{static}/tex-chtml.js"></script>'
        f'<script src="file://{os.path.dirname(static)}/render_check.js"></script></head><body>{blocks}</body></html>'
    )
    args = _chromium_args(tmp_path, "--dump-dom", f"file://{page}?render-check")
    out = subprocess.run(args, capture_output=True, text=True, timeout=120)
    m = re.search(r'<script type="application/json" id="render-check-result">(.*?)</script>', out.stdout, re.S)
    assert m, f"render_check.js wrote no result: {out.stderr[-2000:]}"
    report = json.loads(m.group(1))
    assert report["math_blocks"] == len(formulas.FORMULAS), report
    assert report["typeset_math_blocks"] == report["math_blocks"] and report["raw_tex_blocks"] == 0, report
    assert "<mjx-merror" not in out.stdout, "a formula is not valid TeX for MathJax"
    shown = re.findall(r"<mtext[^>]*>([^<]*)</mtext>", out.stdout)
    assert shown and not [t for t in shown if "\\" in t], [t for t in shown if "\\" in t][:5]
