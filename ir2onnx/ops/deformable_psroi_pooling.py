"""DeformablePSROIPooling-1 (MXNet's deformable position-sensitive ROI pooling, Deformable R-FCN)
-> sub-bin sample positions in f32, 4 corner Gathers on the flat maps, Where-masked ReduceSum.

``coords`` rows are (batch, x1, y1, x2, y2); ``offsets`` (optional) is [R, 2 * classes, part_size,
part_size]; the output is [R, output_dim, group_size, group_size]. The definition followed is the
one OpenVINO's CPU plugin runs (its reference implementation agrees but for the interpolation's
rounding and the -1 batch rule, see docs/deviations.md):

- per ROI: x1 = round(c[1]) * scale - 0.5, x2 = (round(c[3]) + 1) * scale - 0.5 (round half away
  from zero; y likewise), width = max(x2 - x1, 0.1), bin = width / group_size, sub-bin = bin /
  spatial_bins_x (height and spatial_bins_y likewise);
- output (d, i, j) reads input channel (d * group + i) * group + j (the plugin reads the first
  output_dim * group^2 channels of a larger input); its bin's left corner is j * bin + x1 + tx *
  width, tx = offsets[r, 2k, i * part // group, j * part // group] * trans_std and ty from channel
  2k + 1, for the class k = d // (output_dim // classes), classes = offsets' C // 2 (0 without
  offsets; the offsets are read as flat memory with part_size strides, as the plugin reads them);
- sample (sy, sx) of the spatial_bins_y x spatial_bins_x grid sits at corner + s * sub-bin; one
  outside [-0.5, size - 0.5] along either axis is skipped; the others are clamped to
  [0, size - 1] and interpolated from the floor/ceil cells as (1-dx)(1-dy) v00 + (1-dx) dy v10 +
  dx (1-dy) v01 + dx dy v11 (f32, left to right); the output is the mean of the kept samples
  (sum / count), 0 when none is kept;
- the first ROI whose batch id (truncated) is -1 ends the list: it and every later ROI give 0.

Lowering: the positions, weights and interpolation in the plugin's f32 order; the sum over the
kept samples by ReduceSum (its order may differ from the plugin's sequential loop: f32 rounding).
Only the needed cells are gathered: flat indices ((b * C + channel) * H + y) * W + x into the
flattened maps. Out-of-contract run-time values fail in onnxruntime rather than read stray memory
as the plugin does: a batch id outside [0, N) other than the -1 end marker, offsets too small for
an ROI, output_dim not divisible by the run-time number of classes (an out-of-range Gather index).
f16 inputs are computed in f32 and the output cast back (the plugin runs f16 models in f32).
Run-time coords and offsets and dynamic dims are supported (the plugin needs static shapes).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from ..lowering.registry import lowers
from ._common.rois import check_map_and_rois
from ._common.rounding import round_half_away
from ._common.shapes import dims_of, i64

_FLOAT, _INT64 = 1, 7  # TensorProto
_FAR = 2 ** 62  # a Gather index past any tensor: onnxruntime fails the run


def _f32(g, v, hint="c"):
    return g.const(np.asarray(v, np.float32), np.float32, hint)


def _extent(g, lo, hi, group: int, bins: int, scale: float):
    """Per ROI [R, 1] corners -> the ROI's start and extent, the bin and the sub-bin size ([R, 1])."""
    s, half = _f32(g, scale, "scale"), _f32(g, 0.5, "half")
    start = g.Sub(g.Mul(round_half_away(g, lo), s), half)
    end = g.Sub(g.Mul(g.Add(round_half_away(g, hi), _f32(g, 1.0, "one")), s), half)
    extent = g.Max(g.Sub(end, start), _f32(g, 0.1, "least"))
    size = g.Div(extent, _f32(g, float(group), "group"))
    return start, extent, size, g.Div(size, _f32(g, float(bins), "bins"))


def _samples(g, pos, size_f):
    """Sample positions -> floor and ceil cells (int64), the fraction and whether it is kept."""
    zero = _f32(g, 0.0, "zero")
    half, one = _f32(g, 0.5, "half"), _f32(g, 1.0, "one")
    kept = g.Not(g.Or(g.Less(pos, _f32(g, -0.5, "low")), g.Greater(pos, g.Sub(size_f, half))))
    pos = g.Min(g.Max(pos, zero), g.Sub(size_f, one))
    low = g.Floor(pos)
    return g.Cast(low, to=_INT64), g.Cast(g.Ceil(pos), to=_INT64), g.Sub(pos, low), kept


def _offsets(g, offsets, live, dim: int, group: int, part: int, std: float):
    """tx, ty [R, D, g, g]: the flat offsets at (((r * K + k) * 2 + {0, 1}) * P + i * P // g) * P
    + j * P // g, times trans_std; an index past the offsets where output_dim // K does not
    divide output_dim into K classes."""
    flat = g.Reshape(g.Cast(offsets, to=_FLOAT) if offsets.etype.name == "f16" else offsets.name, i64(g, [-1]))
    classes = g.Div(dims_of(g, offsets, 1, 2), i64(g, [2]))  # [1]
    each = g.Div(i64(g, [dim]), g.Max(classes, i64(g, [1])))
    cls = g.Div(i64(g, np.arange(dim), "out_channels"), g.Max(each, i64(g, [1])))  # [D]
    fits = g.And(g.Greater(each, i64(g, [0])), g.Equal(g.Mul(each, classes), i64(g, [dim])))
    rois = g.Squeeze(g.Slice(g.Shape(live), i64(g, [0]), i64(g, [1])), i64(g, [0]))
    r = g.Range(i64(g, 0), rois, i64(g, 1))
    cell = (np.arange(group)[:, None] * part // group) * part + np.arange(group)[None, :] * part // group
    r4 = g.Unsqueeze(r, i64(g, [1, 2, 3]))
    roi_class = g.Add(g.Mul(r4, classes), g.Unsqueeze(cls, i64(g, [0, 2, 3])))  # [R, D, 1, 1]
    at = g.Add(g.Mul(roi_class, i64(g, [2 * part * part])), i64(g, cell.reshape(1, 1, group, group), "parts"))
    at = g.Where(fits, g.Where(g.Unsqueeze(live, i64(g, [1, 2, 3])), at, i64(g, 0)), i64(g, _FAR))
    tx = g.Mul(g.Gather(flat, at, axis=0), _f32(g, std, "trans_std"))
    ty = g.Mul(g.Gather(flat, g.Add(at, i64(g, part * part)), axis=0), _f32(g, std, "trans_std"))
    return tx, ty


@lowers("DeformablePSROIPooling", "opset1")
def deformable_psroi_pooling1(ctx, layer, inputs):
    """DeformablePSROIPooling-1 (input, coords[, offsets]) -> Split, round half away (Abs/Floor/
    Where/Sign), Mul/Sub/Max/Div (ROI, bins), offsets: Reshape, Gather x2, Mul/Add; samples:
    Less/Greater/Or/Not, Min/Max, Floor/Ceil; CumSum (the -1 end marker); Reshape, Gather x4,
    Sub/Mul/Add (interpolation), Where, ReduceSum x2, Div, Where (f16: Cast to f32 and back)."""
    data, rois = inputs[0], inputs[1]
    offsets = inputs[2] if len(inputs) > 2 else None
    check_map_and_rois(layer, data, rois, [(offsets, "offsets")])
    a = layer.attrs
    dim, group = int(a["output_dim"]), int(a.get("group_size", 1))
    bx, by, part = int(a.get("spatial_bins_x", 1)), int(a.get("spatial_bins_y", 1)), int(a.get("part_size", 1))
    scale, std = float(a["spatial_scale"]), float(a.get("trans_std", 1.0))
    if min(dim, group, bx, by, part) < 1:
        raise InvalidLayer(layer, "output_dim, group_size, spatial_bins_x/y and part_size must be >= 1")
    channels = data.shape[1] if data.shape is not None else None
    if channels is not None and channels < dim * group * group:
        raise InvalidLayer(layer, f"input has {channels} channels, output_dim * group_size^2 = {dim * group * group}")
    if offsets is not None and offsets.shape is not None:
        if len(offsets.shape) != 4:
            raise InvalidLayer(layer, f"offsets must be 4-D, got {list(offsets.shape)}")
        k, p = offsets.shape[1], offsets.shape[2:]
        if k is not None and not (2 <= k and dim % (k // 2) == 0 and k // 2 <= dim):
            raise InvalidLayer(layer, f"offsets with {k} channels (2 per class) do not split output_dim {dim} "
                                      "into classes")
        if any(d is not None and d != part for d in p):
            raise InvalidLayer(layer, f"offsets are {list(offsets.shape)}, their H and W must be part_size {part}")
    g = ctx.b
    x = g.Cast(data, to=_FLOAT) if data.etype.name == "f16" else data.name
    boxes = g.Cast(rois, to=_FLOAT) if rois.etype.name == "f16" else rois.name
    batch, x1, y1, x2, y2 = g.Split(boxes, i64(g, [1] * 5), axis=1, _outputs=5)  # [R, 1] each
    index = g.Cast(g.Squeeze(batch, i64(g, [1])), to=_INT64)  # truncates, as the plugin's int cast
    ended = g.Greater(g.CumSum(g.Cast(g.Equal(index, i64(g, -1)), to=_INT64), i64(g, 0)), i64(g, 0))
    live = g.Not(ended)
    n, c, h, w = (dims_of(g, data, k, k + 1) for k in range(4))
    index = g.Where(ended, i64(g, 0), g.Where(g.Less(index, i64(g, 0)), n, index))  # n: out of range

    sx, wx, bin_x, sub_x = _extent(g, x1, x2, group, bx, scale)
    sy, wy, bin_y, sub_y = _extent(g, y1, y2, group, by, scale)
    cells = _f32(g, np.arange(group), "cells")
    left = g.Unsqueeze(g.Add(g.Mul(cells, bin_x), sx), i64(g, [1, 2]))  # [R, 1, 1, g]
    top = g.Unsqueeze(g.Add(g.Mul(cells, bin_y), sy), i64(g, [1, 3]))  # [R, 1, g, 1]
    if offsets is not None:
        tx, ty = _offsets(g, offsets, live, dim, group, part, std)
        left = g.Add(left, g.Mul(tx, g.Unsqueeze(wx, i64(g, [2, 3]))))  # [R, D, g, g]
        top = g.Add(top, g.Mul(ty, g.Unsqueeze(wy, i64(g, [2, 3]))))
    six = i64(g, [2, 3, 4, 5])
    xs = g.Add(g.Unsqueeze(left, i64(g, [4, 5])), g.Mul(g.Unsqueeze(sub_x, six), _f32(g, np.arange(bx), "sub_x")))
    ys = g.Add(g.Unsqueeze(top, i64(g, [4, 5])),
               g.Mul(g.Unsqueeze(sub_y, six), _f32(g, np.arange(by).reshape(by, 1), "sub_y")))
    x0, x1c, dx, keep_x = _samples(g, xs, g.Cast(w, to=_FLOAT))  # [R, D|1, g, g, 1, bx]
    y0, y1c, dy, keep_y = _samples(g, ys, g.Cast(h, to=_FLOAT))  # [R, D|1, g, g, by, 1]

    chan = i64(g, np.arange(dim * group * group).reshape(1, dim, group, group), "channels")
    base = g.Mul(g.Add(g.Mul(g.Unsqueeze(index, i64(g, [1, 2, 3])), c), chan), g.Mul(h, w))
    base = g.Unsqueeze(base, i64(g, [4, 5]))  # [R, D, g, g, 1, 1]
    flat = g.Reshape(x, i64(g, [-1]))
    row0, row1 = g.Add(base, g.Mul(y0, w)), g.Add(base, g.Mul(y1c, w))
    v00, v10 = g.Gather(flat, g.Add(row0, x0), axis=0), g.Gather(flat, g.Add(row1, x0), axis=0)
    v01, v11 = g.Gather(flat, g.Add(row0, x1c), axis=0), g.Gather(flat, g.Add(row1, x1c), axis=0)
    one = _f32(g, 1.0, "one")
    ex, ey = g.Sub(one, dx), g.Sub(one, dy)
    value = g.Add(g.Mul(g.Mul(ex, ey), v00), g.Mul(g.Mul(ex, dy), v10))
    value = g.Add(g.Add(value, g.Mul(g.Mul(dx, ey), v01)), g.Mul(g.Mul(dx, dy), v11))
    kept = g.And(keep_x, keep_y)
    zero = _f32(g, 0.0, "zero")
    total = g.ReduceSum(g.Where(kept, value, zero), i64(g, [4, 5]), keepdims=0)
    count = g.ReduceSum(g.Cast(kept, to=_FLOAT), i64(g, [4, 5]), keepdims=0)
    out = g.Where(g.Greater(count, zero), g.Div(total, g.Max(count, one)), zero)
    out = g.Where(g.Unsqueeze(live, i64(g, [1, 2, 3])), out, zero)
    return [g.Cast(out, to=data.etype.onnx) if data.etype.name == "f16" else out]
