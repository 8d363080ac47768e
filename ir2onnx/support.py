"""The supported-operations table, generated from the registry and the ``opsets/`` data."""
from __future__ import annotations

from . import ops  # noqa: F401  (the op modules fill the lowering table)
from .ir.schema import schemas
from .lowering.registry import supported


def supported_pairs() -> list[tuple[str, str]]:
    return supported()


def input_names(schema, marks: bool = True) -> list[str]:
    """Each input's name, ``?`` when optional, `` (constant)`` when it must be known at convert
    time (the schema's ``constant`` says why); every other input may be a run-time value."""
    return [i["name"] + ("?" if i.get("optional") else "") + (" (constant)" if marks and i.get("constant") else "")
            for i in schema.inputs]


def ops_lines() -> list[str]:
    """``ir2onnx ops``: one line per pair, its inputs split into run-time and constant ones."""
    all_schemas = schemas()
    lines = []
    for key in supported_pairs():
        s = all_schemas.get(key)
        line = f"{key[0]}-{key[1]}"
        if s and s.inputs:
            run = [n for n, i in zip(input_names(s, False), s.inputs) if not i.get("constant")]
            const = [f"{i['name']} ({i['constant']})" for i in s.inputs if i.get("constant")]
            line += "  run-time inputs: " + (", ".join(run) or "none")
            if const:
                line += "; constant only: " + "; ".join(const)
        lines.append(line)
    return lines


def op_details(names: list[str]) -> list[str]:
    """``ir2onnx ops TYPE ...``: every supported version of the named types (case-insensitive),
    with its inputs, attributes and the ONNX chain it becomes. Unknown names: ValueError."""
    all_schemas = schemas()
    by_type: dict[str, list[tuple[str, str]]] = {}
    for key in supported_pairs():
        by_type.setdefault(key[0].lower(), []).append(key)
    unknown = [n for n in names if n.lower() not in by_type]
    if unknown:
        raise ValueError(f"not a supported IR type: {', '.join(unknown)} (ir2onnx ops lists them all)")
    lines = []
    for name in names:
        for key in by_type[name.lower()]:
            s = all_schemas.get(key)
            lines.append(f"{key[0]}-{key[1]}")
            if s:
                lines.append(f"  inputs:     {', '.join(input_names(s)) or 'none'}")
                lines.append(f"  attributes: {', '.join(s.attributes) or 'none'}")
                lines.append(f"  ONNX:       {s.doc}")
    return lines


PAGE = "docs/operations.md"  # the page that embeds the table (tests/test_readme.py keeps it current)


def support_table() -> str:
    """The Markdown table :data:`PAGE` embeds (tests keep the two identical)."""
    all_schemas = schemas()
    lines = ["| IR type | version | inputs | attributes | notes |", "|---|---|---|---|---|"]
    for key in supported_pairs():
        s = all_schemas.get(key)
        inputs = ", ".join(input_names(s)) if s else ""
        attrs = ", ".join(s.attributes) if s else ""
        lines.append(f"| {key[0]} | {key[1]} | {inputs} | {attrs} | {s.doc if s else ''} |")
    return "\n".join(lines)


START, END = "<!-- ops-table:start -->", "<!-- ops-table:end -->"


def page_with_table(text: str) -> str:
    """``text`` with the part between the ops-table markers replaced by :func:`support_table`;
    ValueError when ``text`` has no markers (the table lives in :data:`PAGE`)."""
    if START not in text or END not in text:
        raise ValueError(f"no {START} ... {END} markers: the support table lives in {PAGE}")
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{support_table()}\n{END}{tail}"


if __name__ == "__main__":  # python -m ir2onnx.support [docs/operations.md]  (rewrites the table in place)
    import sys
    from pathlib import Path

    path = Path(sys.argv[1] if len(sys.argv) > 1 else PAGE)
    try:
        path.write_text(page_with_table(path.read_text(encoding="utf-8")), encoding="utf-8")
    except (OSError, ValueError) as e:
        sys.exit(f"{path}: {e}")
