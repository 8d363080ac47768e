"""The pictures of the HTML report (:mod:`ir2onnx.harness.html_report`), each returned as an
``<img>`` element holding a PNG as a base64 ``data:`` URI: the error histogram and the scatter of
an output, each backend's detection boxes on the image input, the error per layer (``--layers``).

matplotlib's object API (``matplotlib.figure.Figure`` on the Agg canvas; no pyplot, so no global
state and no display) is imported in the functions: it is an optional extra (``ir2onnx[report]``).
"""
from __future__ import annotations

import base64
import html
import io

import numpy as np

MAX_BOXES = 25  # per panel: the highest scores
SCATTER_POINTS = 4000  # at most this many points per scatter (a fixed-seed sample of the elements)
COLOURS = {"ort:cpu": "#1f77b4", "ort:cuda": "#9467bd", "oracle": "#2ca02c", "openvino": "#d62728"}


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


def value_pairs(result, name: str) -> list[tuple[str, np.ndarray, str, np.ndarray]]:
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


def histogram(name: str, pairs) -> str:
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


def scatter(name: str, pairs) -> str:
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


def detections(name: str, result, image: tuple[str, np.ndarray], threshold: float) -> str:
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


def drift_plot(drift) -> str:
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
