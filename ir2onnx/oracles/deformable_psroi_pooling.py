"""Oracle of DeformablePSROIPooling-1 (MXNet's deformable PS ROI pooling) by index arithmetic, as
OpenVINO's CPU plugin executes it. Per ROI r (batch b = int(r[0]), truncated; the first ROI whose
b is -1 and every later one give 0): x1 = round(r[1]) * scale - 0.5, x2 = (round(r[3]) + 1) *
scale - 0.5 (round half away from zero; y likewise), width = max(x2 - x1, 0.1), bin = width /
group, sub-bin = bin / spatial_bins_x. Output (d, i, j) reads input channel (d * group + i) * group
+ j; its bin's left corner is j * bin + x1 + tx * width with tx = offsets[r, 2 * k, i * part //
group, j * part // group] * trans_std (k = d // (output_dim // classes), classes = offsets' C / 2;
y from channel 2 * k + 1; tx = 0 without offsets, offsets read as flat memory with part_size
strides, as the plugin does). Sample (sy, sx) sits at corner + s * sub-bin; one outside
[-0.5, size - 0.5] is skipped, the others are clamped to [0, size - 1] and interpolated from the
floor/ceil cells with weights (1 - dx)(1 - dy), (1 - dx)dy, dx(1 - dy), dxdy. The output is the
mean over the samples kept, 0 when none is. Positions in f32 (whether a sample is kept is decided
as the runtime does), values in float64."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle

F = np.float32


def _round(v) -> F:
    return F(math.floor(abs(float(v)) + 0.5) * (1.0 if v >= 0 else -1.0))


def _corner(lo, hi, scale: F, group: int, bins: int):
    """ROI start, extent, bin and sub-bin sizes along one axis, in f32."""
    start = _round(lo) * scale - F(0.5)
    end = (_round(hi) + F(1)) * scale - F(0.5)
    extent = max(end - start, F(0.1))
    size = extent / F(group)
    return start, extent, size, size / F(bins)


def _sample(plane, x: F, y: F) -> float:
    height, width = plane.shape
    x = F(min(max(float(x), 0.0), width - 1.0))
    y = F(min(max(float(y), 0.0), height - 1.0))
    x0, x1, y0, y1 = math.floor(x), math.ceil(x), math.floor(y), math.ceil(y)
    dx, dy = float(x) - x0, float(y) - y0
    return ((1 - dx) * (1 - dy) * plane[y0, x0] + (1 - dx) * dy * plane[y1, x0]
            + dx * (1 - dy) * plane[y0, x1] + dx * dy * plane[y1, x1])


def _roi(layer, v, roi, r, trans, classes, out):
    dim, group = out.shape[0], out.shape[1]
    bins_x, bins_y = int(layer.attrs.get("spatial_bins_x", 1)), int(layer.attrs.get("spatial_bins_y", 1))
    part, std = int(layer.attrs.get("part_size", 1)), F(layer.attrs.get("trans_std", 1.0))
    scale = F(layer.attrs["spatial_scale"])
    _, _, height, width = v.shape
    sx, wx, bx, sbx = _corner(roi[1], roi[3], scale, group, bins_x)
    sy, wy, by, sby = _corner(roi[2], roi[4], scale, group, bins_y)
    for d in range(dim):
        for i in range(group):
            for j in range(group):
                tx = ty = F(0)
                if trans is not None:
                    k = d // (dim // classes)
                    at = (((r * classes + k) * 2) * part + i * part // group) * part + j * part // group
                    if at + part * part >= trans.size:
                        raise InvalidLayer(layer, f"offsets hold no value for ROI {r}, class {k}")
                    tx, ty = trans[at] * std, trans[at + part * part] * std
                left, top = F(j) * bx + sx + tx * wx, F(i) * by + sy + ty * wy
                plane = v[int(roi[0]), (d * group + i) * group + j]
                kept = []
                for s in range(bins_y):
                    for t in range(bins_x):
                        x, y = left + F(t) * sbx, top + F(s) * sby
                        if -0.5 <= x <= width - 0.5 and -0.5 <= y <= height - 0.5:
                            kept.append(_sample(plane, x, y))
                out[d, i, j] = sum(kept) / len(kept) if kept else 0.0


@oracle("DeformablePSROIPooling", "opset1")
def deformable_psroi_pooling1(layer, inputs):
    data, rois = inputs[0], inputs[1].astype(F)
    trans = inputs[2].astype(F).reshape(-1) if len(inputs) > 2 else None
    dim, group = int(layer.attrs["output_dim"]), int(layer.attrs.get("group_size", 1))
    if data.shape[1] < dim * group * group:
        raise InvalidLayer(layer, f"input has {data.shape[1]} channels, fewer than output_dim * group_size^2")
    classes = inputs[2].shape[1] // 2 if trans is not None else 1
    if trans is not None and not (1 <= classes <= dim and dim % classes == 0):
        raise InvalidLayer(layer, f"offsets with {inputs[2].shape[1]} channels (2 per class) do not divide "
                                  f"output_dim {dim} into classes")
    v = data.astype(np.float64)
    out = np.zeros((rois.shape[0], dim, group, group))
    for r, roi in enumerate(rois):
        if int(roi[0]) == -1:
            break  # the plugin's end of the ROI list
        if not 0 <= int(roi[0]) < data.shape[0]:
            raise InvalidLayer(layer, f"ROI batch id {int(roi[0])} out of range")
        _roi(layer, v, roi, r, trans, classes, out[r])
    return [out.astype(data.dtype)]
