"""ROIAlign-3/-9 (avg mode) -> ONNX RoiAlign; ROIAlignRotated-15 -> an explicit GatherND chain.

Each ROI (x1, y1, x2, y2) of ``rois``, scaled by ``spatial_scale``, is split into pooled_h x
pooled_w bins; each bin averages bilinear samples on a sampling_ratio grid (0: ceil(bin size)),
samples outside [-1, size] counting as zero. onnxruntime's RoiAlign computes the same (measured
equal to OpenVINO's within 2.4e-7 on ONNX models read by OpenVINO). The aligned modes of -9:
* asymmetric (and all of -3): ROI * scale, width and height at least 1 -> coordinate_transformation_mode
  output_half_pixel (RoiAlign-10's only behaviour, so any opset >= 14);
* half_pixel_for_nn: ROI * scale - 0.5, no minimum -> half_pixel (opset >= 16);
* half_pixel: (ROI + 0.5) * scale - 0.5 -> Add 0.5 to the ROIs, then half_pixel (the same float
  operations in the same order).
mode=max is not ONNX RoiAlign's: onnxruntime takes the max of the weighted corner values of each
sample (and warns that it is wrong), OpenVINO the max of the interpolated samples and of 0 (its
pooled value starts at 0; measured on the CPU plugin). With a fixed grid (sampling_ratio > 0) it
is emitted as an explicit chain in OpenVINO's float operation order (see :func:`_max_chain`);
sampling_ratio 0 (a grid per ROI size) with max is refused. f16 data runs in f32 between Casts
(onnxruntime's RoiAlign takes f32/f64).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.shapes import dims_of, i64

_INT64, _FLOAT = 7, 1  # TensorProto

_CTM = {"asymmetric": "output_half_pixel", "half_pixel_for_nn": "half_pixel", "half_pixel": "half_pixel"}


def _check_inputs(layer, data, rois, indices, types: tuple, columns: int, which: str) -> None:
    """ROIAlign's and ROIAlignRotated's inputs: float data and rois of one type, integer batch
    indices, 4-D data, rois [num_rois, columns]."""
    for v, what in ((data, "data"), (rois, "rois")):
        if v.etype is None or v.etype.name not in types:
            raise UnsupportedLayer(layer, f"{what} of type {v.etype.name if v.etype else '?'} is not supported {which}")
    if data.etype != rois.etype:
        raise InvalidLayer(layer, f"data ({data.etype.name}) and rois ({rois.etype.name}) differ in type")
    if not indices.etype.is_integer:
        raise InvalidLayer(layer, f"batch_indices must be integers, not {indices.etype.name}")
    if data.rank not in (None, 4):
        raise InvalidLayer(layer, f"data must be 4-D [N, C, H, W], got rank {data.rank}")
    if rois.shape is not None and (len(rois.shape) != 2 or rois.shape[1] not in (None, columns)):
        raise InvalidLayer(layer, f"rois must be [num_rois, {columns}], got {list(rois.shape)}")


def _roi_align(ctx, layer, inputs, aligned: str):
    data, rois, indices = inputs
    _check_inputs(layer, data, rois, indices, ("f16", "f32", "f64"), 4, "(f16, f32, f64 are)")
    mode = str(layer.attrs["mode"])
    ph, pw, ratio = (int(layer.attrs[k]) for k in ("pooled_h", "pooled_w", "sampling_ratio"))
    if mode == "max" and ratio == 0:
        raise UnsupportedLayer(layer, "mode=max with sampling_ratio=0 is not supported (onnxruntime's RoiAlign "
                                      "max pools the weighted corner values, OpenVINO the bilinear samples; "
                                      "the explicit form needs a fixed sampling grid)")
    scale = float(layer.attrs["spatial_scale"])
    if ph < 1 or pw < 1 or ratio < 0 or scale <= 0:
        raise InvalidLayer(layer, f"pooled_h {ph}, pooled_w {pw} must be >= 1, sampling_ratio {ratio} >= 0 "
                                  f"and spatial_scale {scale} > 0")
    g = ctx.b
    ctm = _CTM[aligned]
    cast = data.etype.name == "f16"
    x = g.Cast(data, to=_FLOAT) if cast else data.name
    boxes = g.Cast(rois, to=_FLOAT) if cast else rois.name
    if aligned == "half_pixel":
        boxes = g.Add(boxes, g.const(0.5, np.float32 if cast else rois.etype.numpy, "half"))
    idx = indices.name if indices.etype.name == "i64" else g.Cast(indices, to=_INT64)
    if mode == "max":
        ct = np.float32 if cast else data.etype.numpy
        out = _max_chain(g, data, x, boxes, idx, ph, pw, ratio, scale, aligned, ct)
        return [g.Cast(out, to=data.etype.onnx) if cast else out]
    if ctm != "output_half_pixel":
        ctx.require_opset(layer, 16, f"aligned_mode={aligned}")
    kw = {"coordinate_transformation_mode": ctm} if ctx.opset >= 16 else {}
    out = g.RoiAlign(x, boxes, idx, mode="avg", output_height=ph, output_width=pw, sampling_ratio=ratio,
                     spatial_scale=scale, **kw)
    return [g.Cast(out, to=data.etype.onnx) if cast else out]


def _max_chain(g, data, x: str, boxes: str, idx: str, ph: int, pw: int, ratio: int, scale: float,
               aligned: str, ct) -> str:
    """ROIAlign max with a fixed sampling grid, in OpenVINO's float order: per ROI the sample
    coordinates y1 + i * bin_h + (bin_h / ratio) * (a + 0.5) (and x), samples outside [-1, size]
    are 0, the rest clamped to >= 0 and bilinearly interpolated from the 4 neighbours gathered by
    GatherND (batch_dims 1) as w1 v1 + w2 v2 + w3 v3 + w4 v4; each bin is the max of its samples
    and 0. ``boxes`` already holds the +0.5 of half_pixel."""
    c = lambda v, hint="c": g.const(np.asarray(v, ct), ct, hint)  # noqa: E731
    coords = g.Mul(boxes, c(scale, "scale"))
    if aligned != "asymmetric":
        coords = g.Add(coords, c(-0.5, "offset"))
    x1, y1, x2, y2 = g.Split(coords, i64(g, [1, 1, 1, 1]), axis=1, _outputs=4)  # [R, 1] each
    width, height = g.Sub(x2, x1), g.Sub(y2, y1)
    if aligned == "asymmetric":
        width, height = g.Max(width, c(1.0, "one")), g.Max(height, c(1.0, "one"))
    hw = g.Cast(dims_of(g, data, 2, 4), to=_FLOAT if ct == np.float32 else 11)  # [H, W] as floats
    size_h, size_w = g.Split(hw, i64(g, [1, 1]), axis=0, _outputs=2)
    limits = g.Cast(dims_of(g, data, 2, 4), to=_INT64)

    def axis(start, extent, bins, dim_f, dim_index):
        """Sample coordinates along one axis: low/high int64 indices and weights, valid mask."""
        binsize = g.Div(extent, c(bins, "bins"))
        step = g.Div(binsize, c(ratio, "ratio"))
        grid = np.repeat(np.arange(bins), ratio).astype(ct)
        offs = np.tile(np.arange(ratio) + 0.5, bins).astype(ct)
        pos = g.Add(g.Add(start, g.Mul(binsize, c(grid, "bin_index"))), g.Mul(step, c(offs, "sample_offset")))
        valid = g.And(g.GreaterOrEqual(pos, c(-1.0, "minus_one")), g.LessOrEqual(pos, dim_f))
        pos = g.Max(pos, c(0.0, "zero"))
        last = g.Sub(g.Gather(limits, i64(g, dim_index), axis=0), i64(g, 1))  # size - 1 (int64)
        low = g.Cast(g.Floor(pos), to=_INT64)
        at_end = g.GreaterOrEqual(low, last)
        low = g.Where(at_end, last, low)
        high = g.Where(at_end, last, g.Add(low, i64(g, 1)))
        pos = g.Where(at_end, g.Cast(last, to=_FLOAT if ct == np.float32 else 11), pos)
        frac = g.Sub(pos, g.Cast(low, to=_FLOAT if ct == np.float32 else 11))
        return low, high, frac, g.Sub(c(1.0, "one"), frac), valid

    yl, yh, ly, hy, vy = axis(y1, height, ph, size_h, 0)
    xl, xh, lx, hx, vx = axis(x1, width, pw, size_w, 1)
    maps = g.Transpose(g.Gather(x, idx, axis=0), perm=[0, 2, 3, 1])  # [R, H, W, C]
    sy, sx = ph * ratio, pw * ratio

    def at(rows, cols):
        r = g.Expand(g.Unsqueeze(rows, i64(g, [2, 3])), i64(g, [1, 1, sx, 1]))  # [R, Sy, Sx, 1]
        q = g.Expand(g.Unsqueeze(cols, i64(g, [1, 3])), i64(g, [1, sy, 1, 1]))
        return g.GatherND(maps, g.Concat(r, q, axis=3), batch_dims=1)  # [R, Sy, Sx, C]

    def outer(a, b):
        return g.Mul(g.Unsqueeze(a, i64(g, [2, 3])), g.Unsqueeze(b, i64(g, [1, 3])))  # [R, Sy, Sx, 1]

    value = g.Mul(outer(hy, hx), at(yl, xl))
    value = g.Add(value, g.Mul(outer(hy, lx), at(yl, xh)))
    value = g.Add(value, g.Mul(outer(ly, hx), at(yh, xl)))
    value = g.Add(value, g.Mul(outer(ly, lx), at(yh, xh)))
    valid = g.And(g.Unsqueeze(vy, i64(g, [2, 3])), g.Unsqueeze(vx, i64(g, [1, 3])))
    value = g.Where(valid, value, c(0.0, "zero"))
    grouped = g.Reshape(value, i64(g, [0, ph, ratio, pw, ratio, -1], "shape"))
    if g.opset >= 18:
        pooled = g.ReduceMax(grouped, i64(g, [2, 4], "axes"), keepdims=0)
    else:
        pooled = g.ReduceMax(grouped, axes=[2, 4], keepdims=0)
    return g.Transpose(g.Max(pooled, c(0.0, "zero")), perm=[0, 3, 1, 2])


@lowers("ROIAlign", "opset3")
def roi_align3(ctx, layer, inputs):
    """ROIAlign-3 (data, rois, batch_indices; avg) -> Cast (indices to i64), RoiAlign
    (output_half_pixel)."""
    return _roi_align(ctx, layer, inputs, "asymmetric")


@lowers("ROIAlign", "opset9")
def roi_align9(ctx, layer, inputs):
    """ROIAlign-9 (avg) -> [Add 0.5 to the ROIs for half_pixel,] Cast, RoiAlign (output_half_pixel for
    asymmetric, half_pixel for half_pixel_for_nn and half_pixel)."""
    return _roi_align(ctx, layer, inputs, str(layer.attrs.get("aligned_mode", "asymmetric")))


@lowers("ROIAlignRotated", "opset15")
def roi_align_rotated15(ctx, layer, inputs):
    """ROIAlignRotated-15 (data, rois [R, 5] = cx, cy, w, h, angle, batch_indices; avg) -> Cast,
    Mul/Sub (centre, size), [Neg (clockwise_mode),] Cos/Sin, sample grid Add/Mul, rotation
    Mul/Sub/Add, bounds And/Where, Floor, GatherND (batch_dims 1, 4 neighbours), weighted Add, Div by
    the sample count, ReduceSum over the grid, Transpose.

    OpenVINO's float order in f32 (f16 data runs in f32 between Casts): centre = ROI * scale - 0.5,
    size = ROI * scale, start = -size / 2, bin = size / pooled; pre-rotation sample
    start + i * bin + (bin / ratio) * (a + 0.5); image point y = py * cos - px * sin + cy,
    x = py * sin + px * cos + cx (angle negated if clockwise_mode); samples outside [-1, size] are 0,
    the rest clamped and bilinearly interpolated as ROIAlign. sampling_ratio 0 (a grid per ROI size)
    is refused: ONNX needs a fixed grid."""
    data, rois, indices = inputs
    _check_inputs(layer, data, rois, indices, ("f16", "f32"), 5, "(f16, f32 are; OpenVINO rotates in f32)")
    ph, pw, ratio = (int(layer.attrs[k]) for k in ("pooled_h", "pooled_w", "sampling_ratio"))
    scale = float(layer.attrs["spatial_scale"])
    clockwise = str(layer.attrs.get("clockwise_mode", "false")).lower() in ("true", "1")
    if ph < 1 or pw < 1 or ratio < 0 or scale <= 0:
        raise InvalidLayer(layer, f"pooled_h {ph}, pooled_w {pw} must be >= 1, sampling_ratio {ratio} >= 0 "
                                  f"and spatial_scale {scale} > 0")
    if ratio == 0:
        raise UnsupportedLayer(layer, "sampling_ratio=0 is not supported (the sampling grid is ceil(bin size) "
                                      "per ROI; the explicit form needs a fixed sampling grid)")
    g = ctx.b
    cast = data.etype.name == "f16"
    x = g.Cast(data, to=_FLOAT) if cast else data.name
    boxes = g.Cast(rois, to=_FLOAT) if cast else rois.name
    idx = indices.name if indices.etype.name == "i64" else g.Cast(indices, to=_INT64)
    c = lambda v, hint="c": g.const(np.asarray(v, np.float32), np.float32, hint)  # noqa: E731
    cx, cy, w, h, angle = g.Split(boxes, i64(g, [1, 1, 1, 1, 1]), axis=1, _outputs=5)  # [R, 1] each
    cx, cy = (g.Sub(g.Mul(v, c(scale, "scale")), c(0.5, "half")) for v in (cx, cy))
    w, h = g.Mul(w, c(scale, "scale")), g.Mul(h, c(scale, "scale"))
    if clockwise:
        angle = g.Neg(angle)
    cos, sin = g.Cos(angle), g.Sin(angle)
    hw = g.Cast(dims_of(g, data, 2, 4), to=_FLOAT)  # [H, W] as floats
    size_h, size_w = g.Split(hw, i64(g, [1, 1]), axis=0, _outputs=2)
    limits = dims_of(g, data, 2, 4)
    last_h, last_w = (g.Sub(g.Gather(limits, i64(g, k), axis=0), i64(g, 1)) for k in (0, 1))

    def grid(size, bins):
        """Pre-rotation sample offsets along one axis, [R, bins * ratio]."""
        start = g.Div(g.Neg(size), c(2.0, "two"))
        binsize = g.Div(size, c(bins, "bins"))
        step = g.Div(binsize, c(ratio, "ratio"))
        index = np.repeat(np.arange(bins), ratio).astype(np.float32)
        offs = np.tile(np.arange(ratio) + 0.5, bins).astype(np.float32)
        return g.Add(g.Add(start, g.Mul(binsize, c(index, "bin_index"))), g.Mul(step, c(offs, "sample_offset")))

    rows = g.Unsqueeze(grid(h, ph), i64(g, [2]))  # [R, Sy, 1]
    cols = g.Unsqueeze(grid(w, pw), i64(g, [1]))  # [R, 1, Sx]
    cos3, sin3 = g.Unsqueeze(cos, i64(g, [2])), g.Unsqueeze(sin, i64(g, [2]))
    ys = g.Add(g.Sub(g.Mul(rows, cos3), g.Mul(cols, sin3)), g.Unsqueeze(cy, i64(g, [2])))  # [R, Sy, Sx]
    xs = g.Add(g.Add(g.Mul(rows, sin3), g.Mul(cols, cos3)), g.Unsqueeze(cx, i64(g, [2])))
    valid = g.And(g.And(g.GreaterOrEqual(ys, c(-1.0, "minus_one")), g.LessOrEqual(ys, size_h)),
                  g.And(g.GreaterOrEqual(xs, c(-1.0, "minus_one")), g.LessOrEqual(xs, size_w)))

    def axis(pos, last):
        pos = g.Max(pos, c(0.0, "zero"))
        low = g.Cast(g.Floor(pos), to=_INT64)
        at_end = g.GreaterOrEqual(low, last)
        low = g.Where(at_end, last, low)
        high = g.Where(at_end, last, g.Add(low, i64(g, 1)))
        pos = g.Where(at_end, g.Cast(last, to=_FLOAT), pos)
        frac = g.Sub(pos, g.Cast(low, to=_FLOAT))
        return low, high, frac, g.Sub(c(1.0, "one"), frac)

    yl, yh, ly, hy = axis(ys, last_h)
    xl, xh, lx, hx = axis(xs, last_w)
    maps = g.Transpose(g.Gather(x, idx, axis=0), perm=[0, 2, 3, 1])  # [R, H, W, C]
    last_axis = i64(g, [3])

    def at(r, q):
        return g.GatherND(maps, g.Concat(g.Unsqueeze(r, last_axis), g.Unsqueeze(q, last_axis), axis=3),
                          batch_dims=1)  # [R, Sy, Sx, C]

    def weight(a, b):
        return g.Unsqueeze(g.Mul(a, b), last_axis)

    value = g.Mul(weight(hy, hx), at(yl, xl))
    value = g.Add(value, g.Mul(weight(hy, lx), at(yl, xh)))
    value = g.Add(value, g.Mul(weight(ly, hx), at(yh, xl)))
    value = g.Add(value, g.Mul(weight(ly, lx), at(yh, xh)))
    value = g.Where(g.Unsqueeze(valid, last_axis), g.Div(value, c(ratio * ratio, "count")), c(0.0, "zero"))
    grouped = g.Reshape(value, i64(g, [0, ph, ratio, pw, ratio, -1], "shape"))
    pooled = g.ReduceSum(grouped, i64(g, [2, 4], "axes"), keepdims=0)  # axes an input since opset 13
    out = g.Transpose(pooled, perm=[0, 3, 1, 2])
    return [g.Cast(out, to=data.etype.onnx) if cast else out]
