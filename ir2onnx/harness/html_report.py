"""The HTML report of a check (``ir2onnx check --report r.html``): one self-contained file.

Per output: the comparisons' table (every field each comparison holds, whatever rule judged it),
a histogram of ``|a - b|`` for each pair of backends, and a scatter of onnxruntime's values
against OpenVINO's (or the first pair when OpenVINO did not run). For a detection output
(DetectionOutput rows ``[1, 1, N, 7]``: image_id, label, score, x0, y0, x1, y1 in [0, 1]) beside an
image input, each backend's boxes drawn on the image. The layer-by-layer drift (``--layers``)
when it was measured. Images are PNGs inlined as base64 ``data:`` URIs; nothing is fetched.

Plotting uses matplotlib's object API (``matplotlib.figure.Figure``, the Agg canvas; no pyplot,
so no global state and no display), an optional extra: ``pip install ir2onnx[report]``.
"""
from __future__ import annotations

import base64
import html
import io
import os
from pathlib import Path

import numpy as np

from ..errors import Ir2OnnxError
from ..version import __version__

SCORE_THRESHOLD = 0.3  # detections drawn: score at least this (the detection rule's default)
MAX_BOXES = 25  # per panel: the highest scores
SCATTER_POINTS = 4000  # at most this many points per scatter (a fixed-seed sample of the elements)
COLOURS = {"ort:cpu": "#1f77b4", "ort:cuda": "#9467bd", "oracle": "#2ca02c", "openvino": "#d62728"}
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


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return ('<img alt="{}" src="data:image/png;base64,{}">'.format(
        _e(fig.get_label() or "figure"), base64.b64encode(buf.getvalue()).decode("ascii")))


def _figure(label: str, size=(4.6, 3.0)):
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    fig.set_label(label)
    return fig


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


# -- plots -------------------------------------------------------------------------------------
def _pairs(result, name: str) -> list[tuple[str, np.ndarray, str, np.ndarray]]:
    """Every pair of backends that both made ``name`` with the same shape."""
    done = [b for b in result.backends if b.status == "ok" and name in b.outputs]
    out = []
    for i, a in enumerate(done):
        for b in done[i + 1:]:
            x, y = _numbers(a.outputs[name]), _numbers(b.outputs[name])
            if x is not None and y is not None and x.shape == y.shape:
                out.append((a.name, x, b.name, y))
    return out


def _numbers(value) -> np.ndarray | None:
    """The values as float64 (bf16 and f8 of ml_dtypes too), None for what is not numeric."""
    value = np.asarray(value)
    if value.dtype.kind in "biuf":
        return value.astype(np.float64)
    try:
        return value.astype(np.float64)  # ml_dtypes' bfloat16, float8 ...
    except (TypeError, ValueError):
        return None


def _histogram(name: str, pairs) -> str:
    fig = _figure(f"error histogram of {name}")
    ax = fig.subplots()
    lines = []
    for an, a, bn, b in pairs:
        with np.errstate(invalid="ignore", over="ignore"):
            d = np.abs(a - b).ravel()
        d = d[np.isfinite(d)]
        equal, nonzero = int(np.count_nonzero(d == 0)), d[d > 0]
        lines.append(f"{an} vs {bn}: {equal} of {d.size} equal")
        if nonzero.size:
            counts, edges = np.histogram(np.log10(nonzero), bins=40)
            ax.stairs(counts, edges, label=f"{an} vs {bn}", linewidth=1.5)
    if not ax.has_data():
        ax.text(0.5, 0.5, "every element equal in every pair", ha="center", va="center",
                transform=ax.transAxes)
    else:
        ax.legend(fontsize=7)
    ax.set_xlabel("log10 |a - b| (elements that differ)")
    ax.set_ylabel("elements")
    ax.set_title("; ".join(lines), fontsize=7)
    return _png(fig)


def _scatter(name: str, pairs) -> str:
    pick = next((p for p in pairs if p[0].startswith("ort:") and p[2] == "openvino"), pairs[0])
    an, a, bn, b = pick
    x, y = b.ravel(), a.ravel()
    if x.size > SCATTER_POINTS:
        keep = np.random.default_rng(0).choice(x.size, SCATTER_POINTS, replace=False)
        x, y = x[keep], y[keep]
    fig = _figure(f"{an} against {bn} for {name}")
    ax = fig.subplots()
    ax.scatter(x, y, s=4, alpha=0.6, color=COLOURS.get(an, "#1f77b4"), linewidths=0)
    finite = np.isfinite(x) & np.isfinite(y)
    if finite.any():
        lo, hi = float(min(x[finite].min(), y[finite].min())), float(max(x[finite].max(), y[finite].max()))
        ax.plot([lo, hi], [lo, hi], color="#888", linewidth=0.8, linestyle="--")
    ax.set_xlabel(f"{bn}")
    ax.set_ylabel(f"{an}")
    ax.set_title(f"{an} vs {bn}" + (f" ({x.size} sampled elements)" if a.size > SCATTER_POINTS else ""),
                 fontsize=8)
    return _png(fig)


def is_detection_output(value: np.ndarray) -> bool:
    """DetectionOutput rows: ``[1, 1, N, 7]`` floats."""
    return value.ndim == 4 and value.shape[:2] == (1, 1) and value.shape[3] == 7 and value.dtype.kind == "f"


def image_input(result) -> tuple[str, np.ndarray] | None:
    """The first input that looks like an image batch: 4-D, 1 or 3 channels (NCHW or NHWC), H and
    W of at least 16: ``(name, HxWx3 float image in [0, 1] of batch item 0)``."""
    for name, v in result.inputs.items():
        v = np.asarray(v)
        if v.ndim != 4 or v.dtype.kind not in "uif":
            continue
        if v.shape[1] in (1, 3) and min(v.shape[2:]) >= 16:
            img = np.moveaxis(v[0], 0, -1)
        elif v.shape[3] in (1, 3) and min(v.shape[1:3]) >= 16:
            img = v[0]
        else:
            continue
        img = img.astype(np.float64)
        if img.shape[-1] == 1:
            img = np.repeat(img, 3, axis=-1)
        else:
            img = img[..., ::-1]  # BGR, the Open Model Zoo's order, shown as RGB
        lo, hi = float(img.min()), float(img.max())
        if lo >= 0 and hi <= 1:
            pass
        elif lo >= 0 and hi <= 255:
            img = img / 255.0
        else:
            img = (img - lo) / (hi - lo) if hi > lo else np.zeros_like(img)
        return name, img
    return None


def _detections(name: str, result, image: tuple[str, np.ndarray], threshold: float) -> str:
    done = [b for b in result.backends if b.status == "ok" and name in b.outputs]
    img_name, img = image
    h, w = img.shape[:2]
    fig = _figure(f"{name}: boxes of each backend", size=(4.2 * len(done), 4.4))
    axes = fig.subplots(1, len(done), squeeze=False)[0]
    from matplotlib.patches import Rectangle

    for ax, b in zip(axes, done):
        rows = np.asarray(b.outputs[name], np.float64).reshape(-1, 7)
        rows = rows[(rows[:, 0] == 0) & (rows[:, 2] >= threshold)]
        found = len(rows)
        rows = rows[np.argsort(-rows[:, 2], kind="stable")[:MAX_BOXES]]
        ax.imshow(img, interpolation="nearest")
        colour = COLOURS.get(b.name, "#ff7f0e")
        for _, label, score, x0, y0, x1, y1 in rows:
            ax.add_patch(Rectangle((x0 * w, y0 * h), (x1 - x0) * w, (y1 - y0) * h, fill=False,
                                   edgecolor=colour, linewidth=1.5))
            ax.text(x0 * w, y0 * h, f"{int(label)}:{score:.2f}", color="white", fontsize=6,
                    va="bottom", bbox=dict(facecolor=colour, edgecolor="none", pad=0.5))
        ax.set_xlim(0, w)
        ax.set_ylim(h, 0)
        shown = f", the {len(rows)} highest shown" if found > len(rows) else ""
        ax.set_title(f"{b.name}: {found} box(es){shown}", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    return _png(fig)


def _drift_plot(drift) -> str:
    fig = _figure("error per layer", size=(9.0, 3.0))
    ax = fig.subplots()
    rel = np.array([e.rel for e in drift.layers], np.float64)
    shown = np.where(rel > 0, rel, np.nan)
    ax.plot(np.arange(len(rel)), shown, marker=".", linewidth=1, color="#1f77b4")
    if drift.first is not None:
        ax.axvline(drift.first, color="#d62728", linestyle="--", linewidth=1, label="first beyond tolerance")
        ax.legend(fontsize=7)
    if np.isfinite(shown).any() and np.nanmax(shown) > 0:
        ax.set_yscale("log")
    ax.set_xlabel("layer (graph order)")
    ax.set_ylabel("max |a - b| / max |b|")
    ax.set_title(f"{drift.a} vs {drift.b}, layer by layer", fontsize=8)
    return _png(fig)


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
        passed = bool(o.comparisons) and all(c.passed for c in o.comparisons)
        parts.append(f'<h2 id="{_e("out-" + o.name)}">output <code>{_e(o.name)}</code> '
                     f"{_e(_shape(o.shape))} {_e(o.dtype)} — {_verdict(passed if o.comparisons else None)}</h2>")
        if o.comparisons:
            parts.append(_table(["pair", "verdict", "rule", "measured"], _comparison_rows(o)))
        pairs = _pairs(result, o.name)
        figs = []
        if pairs:
            figs += [_histogram(o.name, pairs), _scatter(o.name, pairs)]
        first = next((b.outputs[o.name] for b in result.backends if b.status == "ok" and o.name in b.outputs),
                     None)
        if image is not None and first is not None and is_detection_output(np.asarray(first)):
            boxes = _detections(o.name, result, image, threshold)
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
            parts.append('<div class="figs">' + _drift_plot(drift) + "</div>")
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
    path.write_text(to_html(result, threshold), encoding="utf-8")
    return path
