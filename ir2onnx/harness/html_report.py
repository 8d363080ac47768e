"""The HTML report of a check (``ir2onnx check --report r.html``): one self-contained file.

Per output: the comparisons' table (every field each comparison holds, whatever rule judged it),
a histogram of ``|a - b|`` for each pair of backends, and a scatter of onnxruntime's values
against OpenVINO's (or the first pair when OpenVINO did not run). For a detection output
(DetectionOutput rows ``[1, 1, N, 7]``: image_id, label, score, x0, y0, x1, y1 in [0, 1]) beside an
image input, each backend's boxes drawn on the image. The layer-by-layer drift (``--layers``)
when it was measured. Images are PNGs inlined as base64 ``data:`` URIs; nothing is fetched.

The pictures: :mod:`ir2onnx.harness.report_plots` (matplotlib, an optional extra:
``pip install ir2onnx[report]``).
"""
from __future__ import annotations

import html
import os
from pathlib import Path

import numpy as np

from ..errors import Ir2OnnxError
from ..version import __version__
from ..writer import atomic_file
from .report_plots import detections, drift_plot, histogram, image_input, is_detection_output, scatter, value_pairs

SCORE_THRESHOLD = 0.3  # detections drawn: score at least this (the detection rule's default)
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;max-width:1100px;
color:#222;line-height:1.4}
h1{font-size:1.4em} h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em} td,th{border:1px solid #ccc;
padding:.2em .5em;text-align:left;vertical-align:top} th{background:#f4f4f4}
td:nth-child(3){white-space:nowrap}
.pass{color:#176b1a;font-weight:600} .fail{color:#b00020;font-weight:600} .none{color:#8a6d00;font-weight:600}
.figs{display:flex;flex-wrap:wrap;gap:.5em} .figs img{border:1px solid #eee;max-width:100%}
code{background:#f6f6f6;padding:0 .2em;word-break:break-all} .drift{background:#ffe9e9}
"""


def require_matplotlib() -> None:
    """Raise :class:`Ir2OnnxError` (exit 2) when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise Ir2OnnxError("an .html report needs matplotlib: pip install 'ir2onnx[report]' "
                           "(or write .json or .md)") from None


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _verdict(passed: bool | None) -> str:
    if passed is None:
        return '<span class="none">not compared</span>'
    return '<span class="pass">pass</span>' if passed else '<span class="fail">FAIL</span>'


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(map(str, v)) + "]"
    return str(v)


def _shape(shape) -> str:
    return "?" if shape is None else "[" + ",".join(map(str, shape)) + "]"


# -- the page ------------------------------------------------------------------------------------
def _table(headers: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
    """``rows`` of HTML cells (escaped by the caller); ``classes``: a CSS class per row ("" none)."""
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        cls = classes[i] if classes else ""
        tag = f'<tr class="{cls}">' if cls else "<tr>"
        body.append(tag + "".join(f"<td>{c}</td>" for c in row) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


HIDDEN = ("output", "a", "b", "passed", "shape", "dtype", "rule")


def _comparison_rows(o) -> list[list[str]]:
    rows = []
    for c in o.comparisons:
        d = c.to_dict()
        rule = d.get("rule") or "elementwise"
        if isinstance(rule, dict):  # a rule given as {name, its numbers}: the numbers are measurements
            d = {**{k: v for k, v in rule.items() if k != "name"}, **d}
            rule = rule.get("name", "")
        measured = "; ".join(f"{_e(k)} {_e(_fmt(v))}" for k, v in d.items()
                             if k not in HIDDEN and not isinstance(v, dict) and v not in (None, "", [], {}))
        rows.append([_e(c.pair), _verdict(bool(c.passed)), _e(rule), measured])
    return rows


def to_html(result, threshold: float | None = None) -> str:
    """The page (see the module's docstring)."""
    require_matplotlib()
    threshold = SCORE_THRESHOLD if threshold is None else threshold
    ok = result.ok
    failures = result.failures()
    parts = [f"<h1>ir2onnx check: <code>{_e(result.model)}</code> — {_verdict(ok)}</h1>",
             f"<p>ONNX opset {_e(result.opset)}, ir2onnx {_e(__version__)}.</p>"]
    if failures:
        parts.append("<h2>Problems</h2><ul>" + "".join(f"<li>{_e(f)}</li>" for f in failures) + "</ul>")
    if result.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in result.notes) + "</ul>")
    parts.append("<h2>Inputs</h2>" + _table(
        ["input", "shape", "dtype", "origin"],
        [[_e(n), _e(_shape(v.shape)), _e(v.dtype), _e(result.input_origin.get(n, ""))]
         for n, v in result.inputs.items()]))
    parts.append("<h2>Backends</h2>" + _table(
        ["backend", "status", "time", "message"],
        [[_e(b.name), _e(b.status), _e(f"{b.seconds * 1000:.1f} ms" if b.status == "ok" else ""),
          _e(b.message)] for b in result.backends]))
    image = image_input(result)
    for o in result.outputs:
        parts.append(f'<h2 id="{_e("out-" + o.name)}">output <code>{_e(o.name)}</code> '
                     f"{_e(_shape(o.shape))} {_e(o.dtype)} — "
                     f"{_verdict({'pass': True, 'fail': False}.get(o.verdict))}</h2>")
        if o.comparisons:
            parts.append(_table(["pair", "verdict", "rule", "measured"], _comparison_rows(o)))
        pairs = value_pairs(result, o.name)
        figs = []
        if pairs:
            figs += [histogram(o.name, pairs), scatter(o.name, pairs)]
        first = next((b.outputs[o.name] for b in result.backends if b.status == "ok" and o.name in b.outputs),
                     None)
        if image is not None and first is not None and is_detection_output(np.asarray(first)):
            boxes = detections(o.name, result, image, threshold)
        else:
            boxes = ""
        if figs:
            parts.append('<div class="figs">' + "".join(figs) + "</div>")
        if boxes:
            parts.append(f"<p>Detections with score ≥ {threshold:g} on image 0 of input "
                         f"<code>{_e(image[0])}</code>, one panel per backend (channels read as BGR, "
                         f"the Open Model Zoo's order).</p><div class=\"figs\">{boxes}</div>")
    drift = getattr(result, "layers", None)
    if drift is not None:
        parts.append(f"<h2>Layer by layer ({_e(drift.a)} vs {_e(drift.b)})</h2><p>{_e(drift.summary())}"
                     + (f"; {drift.left_out} layer output(s) not exposed by both" if drift.left_out else "")
                     + "</p>")
        if drift.layers:
            parts.append('<div class="figs">' + drift_plot(drift) + "</div>")
            rows, classes = [], []
            for i, e in enumerate(drift.layers):
                g = drift.growth(i)
                mark = "first beyond tolerance" if i == drift.first else (f"{g:.3g}x" if g is not None else "")
                rows.append([str(e.index), f"<code>{_e(e.layer)}</code>", _e(e.type), _e(_shape(e.shape)),
                             _e(f"{e.max_abs:.3g}"), _e(f"{e.rel:.3g}"), _e(f"{e.outside}/{e.size}"),
                             _e(e.reason or mark)])
                classes.append("drift" if e.beyond else "")
            parts.append(_table(["#", "layer", "type", "shape", "max abs", "rel", "outside tol", ""],
                                rows, classes))
    title = f"ir2onnx check: {Path(str(result.model)).name} — {'PASS' if ok else 'FAIL'}"
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{_e(title)}</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n")


def write_html(result, path: str | os.PathLike, threshold: float | None = None) -> Path:
    path = Path(path)
    with atomic_file(path, "w", what="--html file", reads=(str(result.model),)) as f:
        f.write(to_html(result, threshold))
    return path
