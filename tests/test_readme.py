"""The README and the docs/ pages stay true: the README is short and opens with the two commands
CI runs, its links resolve, every docs page is in mkdocs.yml's nav (and the nav names no missing
page), and the generated parts (the support table, the conformance matrix) are current."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ir2onnx.ir.schema import schemas
from ir2onnx.lowering.registry import supported
from ir2onnx.selftest.matrix import END as MATRIX_END, START as MATRIX_START
from ir2onnx.support import PAGE, page_with_table

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_support_table_is_generated():
    text = _text(ROOT / PAGE)
    assert text == page_with_table(text), f"run: python -m ir2onnx.support {PAGE}"


def test_support_table_needs_its_markers():
    """Run on a file without the markers (the old README), the generator refuses instead of
    appending a table to it."""
    with pytest.raises(ValueError, match="docs/operations.md"):
        page_with_table("# README\n\nno table here\n")


def test_conformance_page_holds_a_generated_matrix():
    text = _text(DOCS / "conformance.md")
    assert text.count(MATRIX_START) == 1 and text.count(MATRIX_END) == 1
    inside = text.partition(MATRIX_START)[2].partition(MATRIX_END)[0]
    assert inside.lstrip().startswith("Conformance matrix, ") and "| op | cases | spec | ort:cpu |" in inside
    rows = {l.split("|")[1].strip() for l in inside.splitlines() if l.startswith("| ") and "-opset" in l}
    assert len(rows) >= 200, "the matrix lost its rows: ir2onnx selftest --provider all --report docs/conformance.md"


def test_readme_opens_with_two_commands():
    text = _text(ROOT / "README.md")
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
    first = [l for l in blocks[0].splitlines() if l.strip()]
    assert len(first) == 2
    assert "pip install" in first[0] and "ir2onnx convert" in first[0] and "ir2onnx run" in first[0]
    assert ".[test]" in first[1] and "pytest" in first[1]
    sample = re.search(r"ir2onnx convert (\S+)", first[0]).group(1)
    assert (ROOT / sample).is_file() and (ROOT / sample).with_suffix(".bin").is_file()


def test_readme_is_short_and_its_links_resolve():
    text = _text(ROOT / "README.md")
    assert len(text.splitlines()) <= 300, "the README stays under 300 lines: details go to docs/"
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [l for l in links if not re.match(r"[a-z]+://", l)]
    assert any(l.startswith("docs/") for l in local)
    assert not [l for l in local if not (ROOT / l).exists()], "README links to missing files"


def test_every_docs_page_is_in_the_nav():
    """mkdocs (strict) warns about a page left out of the nav; this says which, without mkdocs."""
    nav = re.findall(r"^\s*-\s*(?:[^:\n]+:\s*)?(\S+\.md)\s*$", _text(ROOT / "mkdocs.yml"), re.M)
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(nav) == pages, "list every docs/*.md page in mkdocs.yml's nav, and only those"


def test_every_lowering_has_a_schema_and_every_schema_a_lowering():
    assert set(supported()) == set(schemas())
