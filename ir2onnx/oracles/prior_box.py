"""Oracles of PriorBox-1/-8 and PriorBoxClustered-1, box by box as OpenVINO's operation
specification and reference describe them: loop over cell rows, cell columns and the boxes of a
cell, write (xmin, ymin, xmax, ymax) one after the other, then the variance row. Every value is a
float32 computed in the reference's order (np.float32 scalars)."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle

f = np.float32


def _two(layer, v, what):
    v = np.asarray(v).reshape(-1)
    if v.size != 2 or not np.issubdtype(v.dtype, np.integer):
        raise InvalidLayer(layer, f"{what} must be 2 integers")
    return int(v[0]), int(v[1])


def _variance_row(layer, variance, n_boxes):
    var = [f(v) for v in variance] or [f(0.1)]
    if len(var) not in (1, 4):
        raise InvalidLayer(layer, "variance must have 0, 1 or 4 values")
    return [var[0]] * (4 * n_boxes) if len(var) == 1 else var * n_boxes


@oracle("PriorBoxClustered", "opset1")
def prior_box_clustered(layer, inputs):
    a = layer.attrs
    H, W = _two(layer, inputs[0], "output_size")
    IH, IW = _two(layer, inputs[1], "image_size")
    widths, heights = [f(v) for v in a["width"]], [f(v) for v in a["height"]]
    if len(widths) != len(heights):
        raise InvalidLayer(layer, "width and height differ in length")
    step_w = f(a["step_w"]) if f(a["step_w"]) != 0 else f(a["step"])
    step_h = f(a["step_h"]) if f(a["step_h"]) != 0 else f(a["step"])
    if step_w == 0 and step_h == 0:
        step_w, step_h = f(IW) / f(W), f(IH) / f(H)
    boxes = []
    for h in range(H):
        for w in range(W):
            cx = (f(w) + f(a["offset"])) * step_w
            cy = (f(h) + f(a["offset"])) * step_h
            for bw, bh in zip(widths, heights):
                box = [(cx - bw / f(2)) / f(IW), (cy - bh / f(2)) / f(IH),
                       (cx + bw / f(2)) / f(IW), (cy + bh / f(2)) / f(IH)]
                if a["clip"]:
                    box = [min(max(v, f(0)), f(1)) for v in box]
                boxes += box
    n = H * W * len(widths)
    return [np.array([boxes, _variance_row(layer, a["variance"], n)], np.float32).reshape(2, 4 * n)]


def _ratios(a):
    out = [f(1)]
    for r in a["aspect_ratio"]:
        r = f(r)
        if all(abs(float(r) - float(e)) >= 1e-6 for e in out):
            out.append(r)
            if a["flip"]:
                out.append(f(1) / r)
    return out


def _cell(a, cx, cy, mins, order_min_max, emit):
    """The boxes of one cell, in the spec's order, through ``emit(cx, cy, half_w, half_h, clip)``."""
    ratios = _ratios(a)
    for s, size in enumerate(a["fixed_size"]):
        size = f(size)
        whole = int(size)
        d = int(a["density"][s])
        shift = int(size / f(d))

        def dense(hw, hh):
            for r in range(d):
                for c in range(d):
                    x = cx - f(whole // 2) + f(shift) / f(2) + f(c * shift)
                    y = cy - f(whole // 2) + f(shift) / f(2) + f(r * shift)
                    emit(x, y, hw, hh, True)

        if a["fixed_ratio"]:
            for ar in a["fixed_ratio"]:
                root = np.sqrt(f(ar))
                dense(size * f(0.5) * root, size * f(0.5) / root)
            continue
        if a["density"]:
            dense(f(whole) * f(0.5), f(whole) * f(0.5))
        for ar in ratios:
            if abs(float(ar) - 1) >= 1e-6:
                dense(size * f(0.5) * np.sqrt(ar), size * f(0.5) / np.sqrt(ar))
    for i, m in enumerate(mins):
        emit(cx, cy, m * f(0.5), m * f(0.5), False)

        def big():
            if len(a["max_size"]) > i:
                half = np.sqrt(m * f(a["max_size"][i])) * f(0.5)
                emit(cx, cy, half, half, False)

        def with_ratios():
            if a["scale_all_sizes"] or i == len(mins) - 1:
                base = mins[i if a["scale_all_sizes"] else 0]
                for ar in ratios:
                    if abs(float(ar) - 1) >= 1e-6:
                        emit(cx, cy, base * f(0.5) * np.sqrt(ar), base * f(0.5) / np.sqrt(ar), False)

        if order_min_max:
            big()
            with_ratios()
        else:
            with_ratios()
            big()


def _prior_box(layer, inputs, order_min_max):
    a = layer.attrs
    H, W = _two(layer, inputs[0], "output_size")
    IH, IW = _two(layer, inputs[1], "image_size")
    step, mins = f(a["step"]), [f(m) for m in a["min_size"]]
    if not a["scale_all_sizes"]:  # MXNet: sizes and step relative to the image height
        step = f(IH) / f(H) if step == -1 else step * f(IH)
        mins = [m * f(IH) for m in mins]
    iwi, ihi = f(1) / f(IW), f(1) / f(IH)
    out = []

    def emit(x, y, hw, hh, one_sided):
        box = [(x - hw) * iwi, (y - hh) * ihi, (x + hw) * iwi, (y + hh) * ihi]
        if one_sided:
            box = [max(box[0], f(0)), max(box[1], f(0)), min(box[2], f(1)), min(box[3], f(1))]
        out.extend(box)

    for h in range(H):
        for w in range(W):
            if step == 0:
                cx, cy = (f(w) + f(0.5)) * (f(IW) / f(W)), (f(h) + f(0.5)) * (f(IH) / f(H))
            else:
                cx, cy = (f(a["offset"]) + f(w)) * step, (f(a["offset"]) + f(h)) * step
            _cell(a, cx, cy, mins, order_min_max, emit)
    if a["clip"]:
        out = [min(max(v, f(0)), f(1)) for v in out]
    n = len(out) // 4
    return [np.array([out, _variance_row(layer, a["variance"], n)], np.float32)]


@oracle("PriorBox", "opset1")
def prior_box1(layer, inputs):
    return _prior_box(layer, inputs, True)


@oracle("PriorBox", "opset8")
def prior_box8(layer, inputs):
    return _prior_box(layer, inputs, bool(layer.attrs["min_max_aspect_ratios_order"]))
