"""README.md is the front page: short, and everything it points at exists.

The chapters it used to hold live on the reference site (docs/*.md, Markdown pages of the Sphinx
build), the differences from torchmetrics one page per domain under docs/differences/. These
checks keep the front page within its size, its commands true (each `make X` a Makefile target),
its links and the site's Markdown links pointing at files that exist, every page in the site's
table of contents, and the differences pages in the table format other tooling reads.

When README text written before the move is merged, `TORCHTALLY_OLD_README=path/to/README.md`
checks that every sentence, table row and code line of that file is in README.md or a docs/ page
(skipped without it: the site's text moves on after the merge).
"""

import os
import re
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_README_BYTES = 20_480
# The differences table's header: every page under docs/differences/ holds it, then its rows.
DIFFERENCES_HEADER = "| | torchmetrics | torchtally | why |"
# Pages Sphinx does not build on their own: architecture.rst includes architecture.md.
INCLUDED_PAGES = {"architecture.md"}
LINK = re.compile(r"\]\(([^)\s]+)\)")


def site_pages() -> List[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)


def relative_links(text: str) -> List[str]:
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


def heading_anchor(heading: str) -> str:
    """The anchor GitHub and MyST give a heading: lower case, punctuation dropped, spaces as dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_readme_is_a_front_page() -> None:
    assert len(README.read_bytes()) <= MAX_README_BYTES


def test_readme_keeps_the_two_commands_and_the_install_section() -> None:
    text = README.read_text()
    assert "make demo" in text and "make test" in text
    assert "\n## Install\n" in text


def test_readme_make_commands_are_makefile_targets() -> None:
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), flags=re.MULTILINE))
    # in code blocks ("make demo   # ...") and in backticks ("`make docs`")
    used = set(re.findall(r"(?:^|`)make ([a-z][\w-]*)", README.read_text(), flags=re.MULTILINE))
    assert used, "the README names no make command"
    assert used <= targets, f"README names make targets the Makefile lacks: {sorted(used - targets)}"


def test_readme_relative_links_exist() -> None:
    text = README.read_text()
    anchors = {heading_anchor(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}
    for target in relative_links(text):
        path, _, anchor = target.partition("#")
        if path:
            assert (ROOT / path).exists(), f"README links to a missing file: {target}"
        else:
            assert anchor in anchors, f"README links to a missing heading: {target}"


@pytest.mark.parametrize("page", site_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_site_page_relative_links_exist(page: Path) -> None:
    for target in relative_links(page.read_text()):
        path = target.partition("#")[0]
        if path:
            assert (page.parent / path).exists(), f"{page.name} links to a missing file: {target}"


def test_every_site_page_is_in_the_table_of_contents() -> None:
    entries = set(re.findall(r"^   (\S+)$", (DOCS / "index.rst").read_text(), flags=re.MULTILINE))
    for page in site_pages():
        name = page.relative_to(DOCS).with_suffix("").as_posix()
        if page.name not in INCLUDED_PAGES:
            assert name in entries, f"docs/index.rst's toctree lacks {name}"


def test_differences_pages_hold_table_rows() -> None:
    pages = sorted((DOCS / "differences").glob("*.md"))
    assert {p.stem for p in pages} >= {"general", "classification", "regression", "wrappers"}
    for page in pages:
        lines = page.read_text().split("\n")
        assert DIFFERENCES_HEADER in lines, f"{page.name} lacks the differences table"
        start = lines.index(DIFFERENCES_HEADER) + 2
        rows = []
        for line in lines[start:]:
            if not line.startswith("| "):
                break
            rows.append(line)
        assert rows, f"{page.name} has no rows"
        for row in rows:
            # four cells (what, torchmetrics, torchtally, why): "| a | b | c | d |"
            assert row.endswith(" |") and row.count(" | ") >= 3, f"{page.name}: {row[:60]}"


def normalized(text: str) -> str:
    """Whitespace folded, comments and link targets dropped (a link's target depends on its page)."""
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.DOTALL)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    return re.sub(r"\s+", " ", text).strip()


def text_units(markdown: str) -> List[str]:
    """The sentences of a Markdown file's paragraphs and list items, its table rows and code lines
    (headings left out: a moved chapter's heading changes level)."""
    units: List[str] = []
    paragraph: List[str] = []

    def flush() -> None:
        text = normalized(" ".join(paragraph))
        units.extend(s for s in re.split(r"(?<=[.;:])\s+(?=[A-Z`(*\-])", text) if len(s) > 3)
        paragraph.clear()

    in_code = False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            flush()
            in_code = not in_code
        elif in_code or line.startswith("|"):
            flush()
            if line.strip():
                units.append(normalized(line))
        elif line.startswith("#"):
            flush()
        else:
            if not line.strip() or re.match(r"\s*(- |\d+\. )", line):
                flush()
            paragraph.append(line)
    flush()
    return units


@pytest.mark.skipif(not os.environ.get("TORCHTALLY_OLD_README"), reason="TORCHTALLY_OLD_README not set")
def test_old_readme_text_is_kept() -> None:
    old = Path(os.environ["TORCHTALLY_OLD_README"]).read_text()
    kept = " \n ".join(normalized(p.read_text()) for p in [README, *site_pages()])
    missing = [unit for unit in text_units(old) if unit not in kept]
    assert not missing, f"{len(missing)} pieces of the old README are nowhere: {missing[:5]}"
