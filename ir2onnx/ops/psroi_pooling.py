"""PSROIPooling-1 (R-FCN's position-sensitive ROI pooling) -> explicit GatherND chains (average:
a float64 summed-area table; bilinear: four corner gathers in the plugin's f32 order).

``coords`` rows are (batch, x1, y1, x2, y2); the output is [num_rois, output_dim, group_size,
group_size]. The definition followed is the one OpenVINO's CPU plugin runs (the only runtime that
executes the op; its reference implementation differs at the map's edges, see docs/deviations.md):

- average: input channels = output_dim * group_size^2; output (d, i, j) reads channel
  (d * group_size + i) * group_size + j. start = round(x1) * scale, end = round(x2 + 1) * scale
  (round half away from zero, f32), length = max(end - start, 0.1); bin j spans
  [floor(j * bin + start), ceil((j + 1) * bin + start)) with bin = length / group_size, both ends
  clipped to [0, size]; the value is the bin's mean, 0 for an empty bin.
- bilinear: input channels = output_dim * spatial_bins_x * spatial_bins_y; output (d, i, j) is
  the sum over the sub-bins (by, bx) of one bilinear sample of channel
  (by * bins_x + bx) * output_dim + d, divided by bins_x * bins_y. Along x: start = x1 * scale,
  sub-bin bx spans [start + bx * b, start + (bx + 1) * b], b = (x2 - x1) * scale / bins_x; the
  sample is j * (max - min) * (W - 1) / (group_size - 1) + min * (W - 1) (group_size 1:
  0.5 * (min + max) * (W - 1)); a sample outside [0, W - 1] (or [0, H - 1] along y) adds 0;
  the corners are floor and ceil of the position.

Both modes: the first ROI whose batch id truncates to -1 (the row that ends Proposal's output)
ends the ROI list, as in OpenVINO's CPU plugin: it and every later ROI (other images' too) give 0.

Lowering: only the cells an output needs are gathered (no per-ROI copy of the maps, so an
R-FCN head of 300 ROIs x 1029 channels stays small). average: the bin bounds in the plugin's f32
order, then each bin's sum from a float64 summed-area table (CumSum over H and W of the
zero-padded data) at its 4 corners, divided by the cell count (f64, then cast to f32): the sum
differs from the plugin's sequential f32 loop by f32 rounding (measured <= 2.4e-7 on a 300-ROI
R-FCN head). bilinear: sample positions, corner cells and the interpolation top/bottom/value in
the plugin's f32 order (measured equal bit for bit), samples outside the map 0, then ReduceSum
over the sub-bins and Div (the sum's order may differ: f32 rounding). f16 data is computed in f32
and cast back. Run-time ROIs and dynamic dims are supported (OpenVINO's CPU plugin needs static shapes).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from ..lowering.registry import lowers
from ._common.rois import check_map_and_rois
from ._common.rounding import round_half_away
from ._common.shapes import dims_of, i64

_FLOAT, _INT64, _DOUBLE = 1, 7, 11  # TensorProto


def _f32(g, v, hint="c"):
    return g.const(np.asarray(v, np.float32), np.float32, hint)


def _average_axis(g, lo, hi, size_f, n: int, scale: float):
    """Per ROI [R, 1] corners -> the bins' first and end cells [R, n] (int64), clipped to [0, size]."""
    one, zero = _f32(g, 1.0, "one"), _f32(g, 0.0, "zero")
    start = g.Mul(round_half_away(g, lo), _f32(g, scale, "scale"))
    end = g.Mul(round_half_away(g, g.Add(hi, one)), _f32(g, scale, "scale"))
    step = g.Div(g.Max(g.Sub(end, start), _f32(g, 0.1, "least")), _f32(g, float(n), "bins"))
    idx = _f32(g, np.arange(n), "index")
    clip = lambda v: g.Cast(g.Min(g.Max(v, zero), size_f), to=_INT64)  # noqa: E731
    return clip(g.Floor(g.Add(g.Mul(idx, step), start))), clip(g.Ceil(g.Add(g.Mul(g.Add(idx, one), step), start)))


def _bilinear_axis(g, lo, hi, size_f, bins: int, n: int, scale: float):
    """Per ROI [R, 1] corners -> floor and ceil cells (int64), the fraction and validity of each
    sample, all [R, bins, n]."""
    one, zero = _f32(g, 1.0, "one"), _f32(g, 0.0, "zero")
    start = g.Mul(lo, _f32(g, scale, "scale"))
    width = g.Div(g.Sub(g.Mul(hi, _f32(g, scale, "scale")), start), _f32(g, float(bins), "bins"))  # [R, 1]
    size_m1 = g.Sub(size_f, one)
    box_min = g.Unsqueeze(g.Add(start, g.Mul(_f32(g, np.arange(bins), "sub"), width)), i64(g, [2]))  # [R, bins, 1]
    box_max = g.Unsqueeze(g.Add(start, g.Mul(_f32(g, np.arange(1, bins + 1), "sub_end"), width)), i64(g, [2]))
    if n > 1:
        step = g.Div(g.Mul(g.Sub(box_max, box_min), size_m1), _f32(g, float(n - 1), "cells"))
        pos = g.Add(g.Mul(_f32(g, np.arange(n), "cell"), step), g.Mul(box_min, size_m1))  # [R, bins, n]
    else:
        pos = g.Mul(g.Mul(_f32(g, 0.5, "half"), g.Add(box_min, box_max)), size_m1)
    valid = g.And(g.GreaterOrEqual(pos, zero), g.LessOrEqual(pos, size_m1))
    pos = g.Min(g.Max(pos, zero), size_m1)  # in range for the gather only (invalid samples add 0)
    low = g.Floor(pos)
    return g.Cast(low, to=_INT64), g.Cast(g.Ceil(pos), to=_INT64), g.Sub(pos, low), valid


def _index(g, full, *parts):
    """GatherND indices: each part broadcast to ``full`` and stacked on a new last axis."""
    return g.Concat(*[g.Unsqueeze(g.Expand(p, full), i64(g, [-1])) for p in parts], axis=-1)


def _average(g, x, batch, x1, y1, x2, y2, h_f, w_f, dim: int, group: int, scale: float):
    """Bin sums from a float64 summed-area table [N, C, H + 1, W + 1] at 4 corners per output."""
    h0, h1 = _average_axis(g, y1, y2, h_f, group, scale)
    w0, w1 = _average_axis(g, x1, x2, w_f, group, scale)
    table = g.Pad(g.Cast(x, to=_DOUBLE), i64(g, [0, 0, 1, 1, 0, 0, 0, 0]))
    table = g.CumSum(g.CumSum(table, i64(g, 2)), i64(g, 3))
    full = g.Concat(g.Shape(batch), i64(g, [dim, group, group]), axis=0)  # [R, D, g, g]
    chan = i64(g, np.arange(dim * group * group).reshape(1, dim, group, group), "channels")
    b = g.Unsqueeze(batch, i64(g, [1, 2, 3]))
    rows = lambda v: g.Unsqueeze(v, i64(g, [1, 3]))  # noqa: E731  [R, 1, g, 1]
    cols = lambda v: g.Unsqueeze(v, i64(g, [1, 2]))  # noqa: E731  [R, 1, 1, g]
    at = lambda h, w: g.GatherND(table, _index(g, full, b, chan, rows(h), cols(w)))  # noqa: E731
    total = g.Add(g.Sub(g.Sub(at(h1, w1), at(h0, w1)), at(h1, w0)), at(h0, w0))
    area = g.Cast(g.Mul(g.Sub(rows(h1), rows(h0)), g.Sub(cols(w1), cols(w0))), to=_DOUBLE)
    zero = g.const(np.zeros((), np.float64), np.float64, "zero_d")
    return g.Cast(g.Where(g.Greater(area, zero), g.Div(total, g.Max(area, g.const(np.ones((), np.float64), np.float64, "one_d"))), zero), to=_FLOAT)


def _bilinear(g, x, batch, x1, y1, x2, y2, h_f, w_f, dim: int, group: int, bx: int, by: int, scale: float):
    """4 corner GatherNDs per (ROI, sub-bin, channel, cell), interpolated in the plugin's order."""
    top, bottom, fy, vy = _bilinear_axis(g, y1, y2, h_f, by, group, scale)  # [R, by, g]
    left, right, fx, vx = _bilinear_axis(g, x1, x2, w_f, bx, group, scale)  # [R, bx, g]
    full = g.Concat(g.Shape(batch), i64(g, [by, bx, dim, group, group]), axis=0)
    chan = i64(g, np.arange(by * bx * dim).reshape(1, by, bx, dim, 1, 1), "channels")
    b = g.Unsqueeze(batch, i64(g, [1, 2, 3, 4, 5]))
    rows = lambda v: g.Unsqueeze(v, i64(g, [2, 3, 5]))  # noqa: E731  [R, by, 1, 1, g, 1]
    cols = lambda v: g.Unsqueeze(v, i64(g, [1, 3, 4]))  # noqa: E731  [R, 1, bx, 1, 1, g]
    at = lambda h, w: g.GatherND(x, _index(g, full, b, chan, rows(h), cols(w)))  # noqa: E731
    tl, tr, bl, br = at(top, left), at(top, right), at(bottom, left), at(bottom, right)
    upper = g.Add(tl, g.Mul(g.Sub(tr, tl), cols(fx)))
    lower = g.Add(bl, g.Mul(g.Sub(br, bl), cols(fx)))
    value = g.Add(upper, g.Mul(g.Sub(lower, upper), rows(fy)))
    value = g.Where(g.And(rows(vy), cols(vx)), value, _f32(g, 0.0, "zero"))
    return g.Div(g.ReduceSum(value, i64(g, [1, 2]), keepdims=0), _f32(g, float(bx * by), "bins"))


def _live(g, index: str) -> tuple[str, str]:
    """(``index`` [R] with the ended ROIs at 0, live [R, 1, 1, 1]): a ROI is ended from the first
    batch id -1 on."""
    ends = g.Cast(g.Equal(index, i64(g, -1)), to=_INT64)
    ended = g.Greater(g.CumSum(ends, i64(g, 0)), i64(g, 0))
    return g.Where(ended, i64(g, 0), index), g.Unsqueeze(g.Not(ended), i64(g, [1, 2, 3]))


@lowers("PSROIPooling", "opset1")
def psroi_pooling1(ctx, layer, inputs):
    """PSROIPooling-1 (input, coords) -> Split, round half away (Abs/Floor/Where/Sign), Floor/Ceil,
    average: Pad, CumSum x2 (f64), GatherND x4, Sub/Add, Div; bilinear: GatherND x4, Sub/Mul/Add,
    Where, ReduceSum, Div (f16: Cast to f32 and back); the ROIs from a batch id -1 on: Equal,
    CumSum, Where (0)."""
    data, rois = inputs
    check_map_and_rois(layer, data, rois)
    mode = str(layer.attrs.get("mode", "average"))
    dim, group = int(layer.attrs["output_dim"]), int(layer.attrs.get("group_size", 1))
    bx, by = int(layer.attrs.get("spatial_bins_x", 1)), int(layer.attrs.get("spatial_bins_y", 1))
    scale = float(layer.attrs["spatial_scale"])
    if dim < 1 or group < 1 or bx < 1 or by < 1:
        raise InvalidLayer(layer, "output_dim, group_size and spatial_bins_x/y must be >= 1")
    want = dim * group * group if mode == "average" else dim * bx * by
    channels = data.shape[1] if data.shape is not None else None
    if channels is not None and channels != want:
        raise InvalidLayer(layer, f"input has {channels} channels, mode {mode} needs {want}")
    g = ctx.b
    x = g.Cast(data, to=_FLOAT) if data.etype.name == "f16" else data.name
    boxes = g.Cast(rois, to=_FLOAT) if rois.etype.name == "f16" else rois.name
    batch, x1, y1, x2, y2 = g.Split(boxes, i64(g, [1] * 5), axis=1, _outputs=5)  # [R, 1] each
    hw = g.Cast(dims_of(g, data, 2, 4), to=_FLOAT)
    h_f, w_f = g.Split(hw, i64(g, [1, 1]), axis=0, _outputs=2)
    index = g.Cast(g.Squeeze(batch, i64(g, [1])), to=_INT64)  # truncates, as the plugin's int cast
    index, live = _live(g, index)
    if mode == "average":
        out = _average(g, x, index, x1, y1, x2, y2, h_f, w_f, dim, group, scale)
    else:
        out = _bilinear(g, x, index, x1, y1, x2, y2, h_f, w_f, dim, group, bx, by, scale)
    out = g.Where(live, out, _f32(g, 0.0, "zero"))
    return [g.Cast(out, to=data.etype.onnx) if data.etype.name == "f16" else out]
