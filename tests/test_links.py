"""Every relative link of README.md, model_card.md, docs/ and measurements/README.md leads to a file (not a folder) of
the repository, and every docs/ page that a docstring or comment of the code, the scripts, the measurements, the tests
or CI names exists: a page renamed or removed shows here, not in a reader's 404."""

import re

import pytest
from helpers import ROOT

PAGES = [
    ROOT / "README.md",
    ROOT / "model_card.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    ROOT / "measurements" / "README.md",
]
CODE = [
    *sorted((ROOT / "hf_seq2seq").rglob("*.py")),
    *sorted((ROOT / "scripts").rglob("*.py")),
    *sorted((ROOT / "measurements").rglob("*.py")),
    *sorted((ROOT / "measurements").glob("*.sh")),
    *sorted((ROOT / "tests").glob("*.py")),
    ROOT / ".ci" / "run",
    ROOT / "pyproject.toml",
]
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")
DOCS_PAGE = re.compile(r"(?<![\w/.])(docs/[\w./-]+\.md)\b")


def relative_links(text: str) -> list[str]:
    """The targets of a page's Markdown links that are files of this repository (no scheme, not an anchor alone),
    without their anchors."""
    return [
        link.split("#")[0]
        for link in MARKDOWN_LINK.findall(text)
        if not re.match(r"[a-z][a-z0-9+.-]*:", link) and not link.startswith("#")
    ]


def test_relative_links_are_found_in_links_of_any_form():
    text = "[a](guide/a.md#x) [b](https://b.org/c.md) [c](#anchor) [d](bench/d.json) [e](mailto:e@f.g)"
    assert relative_links(text) == ["guide/a.md", "bench/d.json"]
    assert DOCS_PAGE.findall("see docs/formats.md, and docs/bench/x.json; not mydocs/y.md") == [
        "docs/formats.md"
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_of_a_page_leads_to_a_file(page):
    missing = [
        link
        for link in relative_links(page.read_text(encoding="utf-8"))
        if not (page.parent / link).is_file()
    ]
    assert not missing, missing


def test_every_docs_page_the_code_names_exists():
    missing = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in CODE
        for name in DOCS_PAGE.findall(path.read_text(encoding="utf-8"))
        if not (ROOT / name).is_file()
    }
    assert not missing, sorted(missing)
