"""The supported-operations table, generated from the registry and the ``opsets/`` data."""
from __future__ import annotations

from .ir.schema import schemas
from .lowering.registry import supported


def supported_pairs() -> list[tuple[str, str]]:
    return supported()


def support_table() -> str:
    """The Markdown table the README embeds (tests keep the two identical)."""
    all_schemas = schemas()
    lines = ["| IR type | version | inputs | attributes | notes |", "|---|---|---|---|---|"]
    for key in supported_pairs():
        s = all_schemas.get(key)
        inputs = ", ".join(i["name"] + ("?" if i.get("optional") else "") for i in s.inputs) if s else ""
        attrs = ", ".join(s.attributes) if s else ""
        lines.append(f"| {key[0]} | {key[1]} | {inputs} | {attrs} | {s.doc if s else ''} |")
    return "\n".join(lines)
