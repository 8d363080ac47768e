"""PSROIPooling-1 (R-FCN's position-sensitive ROI pooling) -> an explicit f32 chain ending in
Einsum.

``coords`` rows are (batch, x1, y1, x2, y2); the output is [num_rois, output_dim, group_size,
group_size]. The definition followed is the one OpenVINO's CPU plugin runs (the only runtime that
executes the op; its reference implementation differs at the map's edges, see the README):

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

Lowering: the bins (average) or the samples' weights (bilinear: 1 - f on the floor, f on the
ceil) become per-ROI one-hot row and column weights [R, ., H] / [R, ., W], and one Einsum sums
weight_y * weight_x * data over the map (average then divides by the bin's cell count). Bin bounds
and sample positions follow the plugin's f32 order; the sums are in Einsum's order rather than the
plugin's sequential loop: arithmetic, within f32 rounding (f16 data is computed in f32 and cast
back). Run-time ROIs and dynamic dims are supported (OpenVINO's CPU plugin needs static shapes).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ..lowering.shapes import dims_of, i64

_FLOAT, _INT64 = 1, 7  # TensorProto


def _f32(g, v, hint="c"):
    return g.const(np.asarray(v, np.float32), np.float32, hint)


def _round_half_away(g, v):
    mag = g.Abs(v)
    low = g.Floor(mag)
    up = g.Where(g.GreaterOrEqual(g.Sub(mag, low), _f32(g, 0.5, "half")), g.Add(low, _f32(g, 1.0, "one")), low)
    return g.Mul(g.Sign(v), up)


def _one_hot(g, index, size_i):
    """[..., 1] int64 index -> [..., size] f32 one-hot (a run-time size)."""
    grid = g.Range(i64(g, 0), size_i, i64(g, 1))
    return g.Cast(g.Equal(index, grid), to=_FLOAT)


def _average_axis(g, lo, hi, size_f, size_i, n: int, scale: float):
    """Per ROI [R, 1] corners -> weights [R, n, size] (1 inside the bin) and the bin lengths [R, n]."""
    one, zero = _f32(g, 1.0, "one"), _f32(g, 0.0, "zero")
    start = g.Mul(_round_half_away(g, lo), _f32(g, scale, "scale"))
    end = g.Mul(_round_half_away(g, g.Add(hi, one)), _f32(g, scale, "scale"))
    step = g.Div(g.Max(g.Sub(end, start), _f32(g, 0.1, "least")), _f32(g, float(n), "bins"))
    idx = _f32(g, np.arange(n), "index")
    clip = lambda v: g.Min(g.Max(v, zero), size_f)  # noqa: E731
    first = clip(g.Floor(g.Add(g.Mul(idx, step), start)))
    last = clip(g.Ceil(g.Add(g.Mul(g.Add(idx, one), step), start)))  # [R, n]
    grid = g.Cast(g.Range(i64(g, 0), size_i, i64(g, 1)), to=_FLOAT)  # [size]
    inside = g.And(g.GreaterOrEqual(grid, g.Unsqueeze(first, i64(g, [2]))), g.Less(grid, g.Unsqueeze(last, i64(g, [2]))))
    return g.Cast(inside, to=_FLOAT), g.Sub(last, first)


def _bilinear_axis(g, lo, hi, size_f, size_i, bins: int, n: int, scale: float):
    """Per ROI [R, 1] corners -> sample weights [R, bins, n, size] (0 outside [0, size - 1])."""
    one = _f32(g, 1.0, "one")
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
    valid = g.Cast(g.And(g.GreaterOrEqual(pos, _f32(g, 0.0, "zero")), g.LessOrEqual(pos, size_m1)), to=_FLOAT)
    pos = g.Max(pos, _f32(g, 0.0, "zero"))
    low = g.Floor(pos)
    frac = g.Unsqueeze(g.Sub(pos, low), i64(g, [3]))
    low_i = g.Unsqueeze(g.Cast(low, to=_INT64), i64(g, [3]))
    high_i = g.Min(g.Unsqueeze(g.Cast(g.Ceil(pos), to=_INT64), i64(g, [3])), g.Sub(size_i, i64(g, 1)))
    w = g.Add(g.Mul(_one_hot(g, low_i, size_i), g.Sub(one, frac)), g.Mul(_one_hot(g, high_i, size_i), frac))
    return g.Mul(w, g.Unsqueeze(valid, i64(g, [3])))


@lowers("PSROIPooling", "opset1")
def psroi_pooling1(ctx, layer, inputs):
    """PSROIPooling-1 (input, coords) -> Split, Round-half-away/Floor/Ceil, Range, Equal, Cast,
    Gather (batch), Reshape, Einsum, Div (f16: Cast to f32 and back)."""
    data, rois = inputs
    for v, what in ((data, "input"), (rois, "coords")):
        if v.etype is None or v.etype.name not in ("f16", "f32"):
            raise UnsupportedLayer(layer, f"{what} of type {v.etype.name if v.etype else '?'} is not supported "
                                          "(f16 and f32 only)")
    if data.rank not in (None, 4):
        raise InvalidLayer(layer, f"input must be 4-D [N, C, H, W], got rank {data.rank}")
    if rois.shape is not None and (len(rois.shape) != 2 or rois.shape[1] not in (None, 5)):
        raise InvalidLayer(layer, f"coords must be [num_rois, 5], got {list(rois.shape)}")
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
    hw_i = g.Cast(dims_of(g, data, 2, 4), to=_INT64)
    h_i, w_i = g.Split(hw_i, i64(g, [1, 1]), axis=0, _outputs=2)
    h_i, w_i = g.Squeeze(h_i, i64(g, [0])), g.Squeeze(w_i, i64(g, [0]))
    h_f, w_f = g.Cast(h_i, to=_FLOAT), g.Cast(w_i, to=_FLOAT)
    maps = g.Gather(x, g.Cast(g.Squeeze(batch, i64(g, [1])), to=_INT64), axis=0)  # [R, C, H, W]
    if mode == "average":
        wy, ny = _average_axis(g, y1, y2, h_f, h_i, group, scale)
        wx, nx = _average_axis(g, x1, x2, w_f, w_i, group, scale)
        blocks = g.Reshape(maps, g.Concat(i64(g, [0, dim, group, group]), hw_i, axis=0))
        total = g.Einsum(blocks, wy, wx, equation="rdpqhw,rph,rqw->rdpq")
        count = g.Mul(g.Unsqueeze(ny, i64(g, [1, 3])), g.Unsqueeze(nx, i64(g, [1, 2])))
        out = g.Where(g.Equal(count, _f32(g, 0.0, "zero")), _f32(g, 0.0, "zero"), g.Div(total, count))
    else:
        wy = _bilinear_axis(g, y1, y2, h_f, h_i, by, group, scale)
        wx = _bilinear_axis(g, x1, x2, w_f, w_i, bx, group, scale)
        blocks = g.Reshape(maps, g.Concat(i64(g, [0, by, bx, dim]), hw_i, axis=0))
        total = g.Einsum(blocks, wy, wx, equation="rabdhw,raph,rbqw->rdpq")
        out = g.Div(total, _f32(g, float(bx * by), "bins"))
    return [g.Cast(out, to=data.etype.onnx) if data.etype.name == "f16" else out]
