"""ROIPooling-2 (method max) -> ONNX MaxRoiPool.

Each ROI (batch id, x1, y1, x2, y2) is scaled and rounded to whole cells (round half away from
zero), forced to at least 1x1, and split into pooled_h x pooled_w bins [floor(i * size / n),
ceil((i + 1) * size / n)) clipped to the map; each bin takes its maximum, an empty bin 0. ONNX
MaxRoiPool is that same Caffe definition (onnxruntime measured equal to OpenVINO on ONNX models
read by OpenVINO). onnxruntime's MaxRoiPool takes f32: f16 data is Cast to f32 and back
(exact: every value comes through unchanged); f64 is refused (f32 would round it).

method=bilinear (one bilinear sample per output cell at normalised ROI coordinates; no ONNX op)
-> an explicit chain in OpenVINO's float order (:func:`_bilinear`), measured within 5e-7 of
OpenVINO's CPU plugin, which agrees with its reference.

Both methods: the first ROI whose batch id truncates to -1 (the row that ends Proposal's output)
ends the ROI list, as in OpenVINO's CPU plugin: it and every later ROI (other images' too) give 0
(:func:`_live`: Equal, CumSum, Where; such ROIs pool image 0, then Where zeroes them).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from ..lowering.registry import lowers
from ._common.rois import check_map_and_rois
from ._common.shapes import dims_of, i64

_FLOAT, _INT64, _DOUBLE = 1, 7, 11  # TensorProto


def _positions(g, start, end, extent, size_m1, pooled: int) -> str:
    """Sample coordinates [R, pooled] along one axis, as OpenVINO computes them: i * (extent /
    (pooled - 1)) + start * (size - 1), the last exactly (size - 1) * end; one cell: the centre,
    0.5 * (start + end) * (size - 1) (the sum in f32, the products in double), rounded to f32."""
    f32 = lambda v, hint: g.const(np.asarray(v, np.float32), np.float32, hint)  # noqa: E731
    if pooled == 1:
        total = g.Cast(g.Add(start, end), to=_DOUBLE)
        centre = g.Mul(g.Mul(total, g.const(np.asarray(0.5), np.float64, "half")), g.Cast(size_m1, to=_DOUBLE))
        return g.Cast(centre, to=_FLOAT)
    step = g.Div(extent, f32(pooled - 1, "cells"))
    inner = g.Add(g.Mul(f32(np.arange(pooled), "index"), step), g.Mul(start, size_m1))
    last = np.zeros(pooled, bool)
    last[-1] = True
    return g.Where(g.const(last, np.bool_, "last"), g.Mul(size_m1, end), inner)


def _live(g, index: str) -> tuple[str, str]:
    """(``index`` [R] with the ended ROIs at 0, live [R, 1, 1, 1]): a ROI is ended from the first
    batch id -1 on."""
    ends = g.Cast(g.Equal(index, i64(g, -1)), to=_INT64)
    ended = g.Greater(g.CumSum(ends, i64(g, 0)), i64(g, 0))
    return g.Where(ended, i64(g, 0), index), g.Unsqueeze(g.Not(ended), i64(g, [1, 2, 3]))


def _bilinear(g, data, x: str, rois: str, index: str, ph: int, pw: int) -> str:
    """ROIPooling bilinear: per ROI (batch, x1, y1, x2, y2 in [0, 1]) and cell, one sample at
    _positions; outside [0, size - 1]: 0; else top = tl + (tr - tl) * fx, bottom likewise, out =
    top + (bottom - top) * fy with the corners floor/ceil (clipped) of the position."""
    _, xs, ys, xe, ye = g.Split(rois, i64(g, [1] * 5), axis=1, _outputs=5)  # [R, 1] each
    size_m1 = g.Sub(g.Cast(dims_of(g, data, 2, 4), to=_FLOAT), g.const(np.ones(2, np.float32), np.float32, "one"))
    h_m1, w_m1 = g.Split(size_m1, i64(g, [1, 1]), axis=0, _outputs=2)
    limit = g.Sub(g.Cast(dims_of(g, data, 2, 4), to=_INT64), i64(g, [1, 1]))
    lim_h, lim_w = g.Split(limit, i64(g, [1, 1]), axis=0, _outputs=2)
    zero_f = g.const(np.zeros((), np.float32), np.float32, "zero")
    zero_i = i64(g, 0)

    def axis(start, end, size_m1, lim, pooled):
        pos = _positions(g, start, end, g.Mul(g.Sub(end, start), size_m1), size_m1, pooled)
        valid = g.And(g.GreaterOrEqual(pos, zero_f), g.LessOrEqual(pos, size_m1))
        low = g.Cast(g.Floor(pos), to=_INT64)
        high = g.Min(g.Cast(g.Ceil(pos), to=_INT64), lim)
        frac = g.Sub(pos, g.Cast(low, to=_FLOAT))
        clamp = lambda v: g.Max(g.Min(v, lim), zero_i)  # noqa: E731  in range for the gather only
        return clamp(low), clamp(high), frac, valid

    top, bottom, fy, vy = axis(ys, ye, h_m1, lim_h, ph)  # [R, ph]
    left, right, fx, vx = axis(xs, xe, w_m1, lim_w, pw)  # [R, pw]
    maps = g.Transpose(g.Gather(x, index, axis=0), perm=[0, 2, 3, 1])  # [R, H, W, C]

    def at(rows, cols):
        r = g.Expand(g.Unsqueeze(rows, i64(g, [2, 3])), i64(g, [1, 1, pw, 1]))
        q = g.Expand(g.Unsqueeze(cols, i64(g, [1, 3])), i64(g, [1, ph, 1, 1]))
        return g.GatherND(maps, g.Concat(r, q, axis=3), batch_dims=1)  # [R, ph, pw, C]

    fx4, fy4 = g.Unsqueeze(fx, i64(g, [1, 3])), g.Unsqueeze(fy, i64(g, [2, 3]))
    tl, tr, bl, br = at(top, left), at(top, right), at(bottom, left), at(bottom, right)
    upper = g.Add(tl, g.Mul(g.Sub(tr, tl), fx4))
    lower = g.Add(bl, g.Mul(g.Sub(br, bl), fx4))
    value = g.Add(upper, g.Mul(g.Sub(lower, upper), fy4))
    valid = g.And(g.Unsqueeze(vy, i64(g, [2, 3])), g.Unsqueeze(vx, i64(g, [1, 3])))
    return g.Transpose(g.Where(valid, value, zero_f), perm=[0, 3, 1, 2])


@lowers("ROIPooling", "opset2")
def roi_pooling2(ctx, layer, inputs):
    """ROIPooling-2 (input, coords) -> MaxRoiPool (method max; f16: Cast, MaxRoiPool, Cast) or the
    bilinear chain: Split, Where, Floor/Ceil, Gather, GatherND x4, Sub/Mul/Add, Where, Transpose;
    the ROIs from a batch id -1 on: Equal, CumSum, Where (0)."""
    data, rois = inputs
    check_map_and_rois(layer, data, rois, why="onnxruntime's MaxRoiPool takes f32; f16 goes through it exactly")
    method = str(layer.attrs.get("method", "max"))
    ph, pw = int(layer.attrs["pooled_h"]), int(layer.attrs["pooled_w"])
    scale = float(layer.attrs["spatial_scale"])
    if ph < 1 or pw < 1 or scale <= 0:
        raise InvalidLayer(layer, f"pooled_h {ph} and pooled_w {pw} must be >= 1, spatial_scale {scale} > 0")
    g = ctx.b
    x = g.Cast(data, to=_FLOAT) if data.etype.name == "f16" else data.name
    boxes = g.Cast(rois, to=_FLOAT) if rois.etype.name == "f16" else rois.name
    batch, corners = g.Split(boxes, i64(g, [1, 4]), axis=1, _outputs=2)
    index = g.Cast(g.Squeeze(batch, i64(g, [1])), to=_INT64)  # truncates, as OpenVINO's int cast
    index, live = _live(g, index)
    if method == "bilinear":
        out = _bilinear(g, data, x, boxes, index, ph, pw)
    else:
        boxes = g.Concat(g.Unsqueeze(g.Cast(index, to=_FLOAT), i64(g, [1])), corners, axis=1)
        out = g.MaxRoiPool(x, boxes, pooled_shape=[ph, pw], spatial_scale=scale)
    out = g.Where(live, out, g.const(np.zeros((), np.float32), np.float32, "zero"))
    return [g.Cast(out, to=data.etype.onnx) if data.etype.name == "f16" else out]
