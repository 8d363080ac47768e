"""The README's generated parts stay true."""
from __future__ import annotations

import re
from pathlib import Path

from ir2onnx.ir.schema import schemas
from ir2onnx.lowering.registry import supported
from ir2onnx.support import readme_with_table

ROOT = Path(__file__).resolve().parents[1]


def test_support_table_is_generated():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text == readme_with_table(text), "run: python -m ir2onnx.support README.md"


def test_readme_opens_with_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
    first = [l for l in blocks[0].splitlines() if l.strip()]
    assert len(first) == 2
    assert "pip install" in first[0] and "ir2onnx convert" in first[0] and "ir2onnx run" in first[0]
    assert ".[test]" in first[1] and "pytest" in first[1]
    sample = re.search(r"ir2onnx convert (\S+)", first[0]).group(1)
    assert (ROOT / sample).is_file() and (ROOT / sample).with_suffix(".bin").is_file()


def test_every_lowering_has_a_schema_and_every_schema_a_lowering():
    assert set(supported()) == set(schemas())
