"""Text, Markdown and JSON renderings of a :class:`~ir2onnx.harness.check.CheckResult` (the HTML
one: :mod:`ir2onnx.harness.html_report`). The JSON report follows ``report.schema.json`` beside
this module (``SCHEMA_PATH``; docs/check.md)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ..version import __version__
from ..writer import atomic_file
from .html_report import to_html
from .layers import markdown_lines, text_lines

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")
REPORT_SUFFIXES = (".json", ".md", ".html")


def _shape(shape) -> str:
    return "?" if shape is None else "[" + ",".join(map(str, shape)) + "]"


def _num(x) -> str:
    return "-" if x is None else f"{x:.3g}"


def _tol(c) -> str:
    return "exact" if c.exact else f"rtol {c.rtol:g} atol {c.atol:g}"


def _backend_line(b) -> str:
    if b.status == "ok":
        return f"  {b.name:<10} ok           {b.seconds * 1000:8.1f} ms"
    return f"  {b.name:<10} {b.status:<12} {b.message}"


def format_text(result) -> str:
    """The report ``ir2onnx check`` prints."""
    lines = [f"model   {result.model}  (ONNX opset {result.opset})", "inputs"]
    for name, value in result.inputs.items():
        lines.append(f"  {name:<10} {_shape(value.shape)} {value.dtype}  {result.input_origin[name]}")
    lines.append("backends")
    lines += [_backend_line(b) for b in result.backends]
    for o in result.outputs:
        lines.append(f"output '{o.name}'  shape {_shape(o.shape)}  {o.dtype or '?'}")
        for c in o.comparisons:
            verdict = "pass" if c.passed else "FAIL"
            detail = c.reason or f"max abs {_num(c.max_abs):<9} max rel {_num(c.max_rel):<9} {_tol(c)}"
            if c.rule and not c.reason:
                detail = f"max abs {_num(c.max_abs):<9} {c.rule}: {c.detail}"  # the rule that judged it
            lines.append(f"  {c.pair:<24} {detail:<58} {verdict}")
    if result.layers is not None:
        lines += text_lines(result.layers)
    failures = result.failures()
    if failures:
        lines.append(f"result  FAIL ({len(failures)} problem(s))")
        lines += [f"  {f}" for f in failures]
        lines += [f"note    {n}" for n in result.notes]
    else:
        ran = [b.name for b in result.backends if b.status == "ok"]
        idle = [f"{b.name} ({b.status})" for b in result.backends if b.status != "ok"]
        lines.append(f"result  PASS: {', '.join(ran)} agree on {len(result.outputs)} output(s)"
                     + (f"; not compared: {', '.join(idle)}" if idle else ""))
        if any(c.rule for o in result.outputs for c in o.comparisons):
            lines += [f"note    {n}" for n in result.notes]
    return "\n".join(lines)


def to_dict(result) -> dict:
    """Everything but the arrays' values (inputs are described by shape and dtype)."""
    return {
        "ir2onnx": __version__, "model": result.model, "opset": result.opset, "ok": result.ok,
        "inputs": [{"name": n, "shape": list(v.shape), "dtype": str(v.dtype),
                    "origin": result.input_origin[n]} for n, v in result.inputs.items()],
        "backends": [{"name": b.name, "status": b.status, "message": b.message,
                      "seconds": round(b.seconds, 6)} for b in result.backends],
        "outputs": [{"name": o.name, "shape": None if o.shape is None else list(o.shape),
                     "dtype": o.dtype, "verdict": o.verdict, "passed": o.passed,
                     "comparisons": [c.to_dict() for c in o.comparisons]} for o in result.outputs],
        "failures": result.failures(),
        "notes": result.notes,
        "layers": None if result.layers is None else result.layers.to_dict(),
    }


def to_markdown(result) -> str:
    lines = [f"### ir2onnx check: `{result.model}` — {'PASS' if result.ok else 'FAIL'}",
             "", f"ONNX opset {result.opset}, ir2onnx {__version__}.", "",
             "| input | shape | dtype | origin |", "|---|---|---|---|"]
    for name, value in result.inputs.items():
        origin = result.input_origin.get(name, "").replace("|", "/")
        lines.append(f"| {name} | {_shape(value.shape)} | {value.dtype} | {origin} |")
    lines += ["", "| backend | status | time | note |", "|---|---|---|---|"]
    for b in result.backends:
        t = f"{b.seconds * 1000:.1f} ms" if b.status == "ok" else ""
        lines.append(f"| {b.name} | {b.status} | {t} | {b.message.replace('|', '/')} |")
    lines += ["", "| output | shape | dtype | pair | max abs | max rel | tolerance | result |",
              "|---|---|---|---|---|---|---|---|"]
    for o in result.outputs:
        for c in o.comparisons:
            tol = c.reason or (f"{c.rule}: {c.detail}" if c.rule else _tol(c))
            lines.append(f"| {o.name} | {_shape(o.shape)} | {o.dtype} | {c.pair} | {_num(c.max_abs)} "
                         f"| {_num(c.max_rel)} | {tol} | {'pass' if c.passed else '**FAIL**'} |")
    failures = result.failures()
    if failures:
        lines += [""] + [f"- {f}" for f in failures] + [f"- note: {n}" for n in result.notes]
    elif any(c.rule for o in result.outputs for c in o.comparisons):  # say which rule judged
        lines += [""] + [f"- note: {n}" for n in result.notes]
    if result.layers is not None:
        lines += markdown_lines(result.layers)
    return "\n".join(lines) + "\n"


def _finite(x):
    """JSON has no inf/nan: write them as the strings "inf", "-inf", "nan"."""
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if np.isfinite(x) else str(x)
    return x.item() if isinstance(x, np.generic) else x


def write_report(result, path: str | os.PathLike) -> Path:
    """Write ``.json``, ``.md`` or ``.html`` (chosen by the suffix; .html needs matplotlib),
    atomically (:func:`ir2onnx.writer.atomic_file`)."""
    path = Path(path)
    if path.suffix.lower() == ".html":
        text = to_html(result)
    elif path.suffix.lower() == ".json":
        text = json.dumps(_finite(to_dict(result)), indent=2, allow_nan=False) + "\n"
    else:
        text = to_markdown(result)
    with atomic_file(path, "w", what="--report file") as f:
        f.write(text)
    return path
