"""Oracle of PSROIPooling-1 from the spec as OpenVINO's runtime executes it, by index arithmetic
in float64 (ROI corners scaled in f32). average: start = round(x1) * scale, end = round(x2 + 1) *
scale (round half away from zero), length = max(end - start, 0.1); bin j of group_size spans
[floor(j * b + start), ceil((j + 1) * b + start)), b = length / group_size, both ends clipped to
[0, size]; output (d, i, j) is the mean of channel (d * group + i) * group + j over the bin, 0 if
the bin is empty. bilinear: the mean over the spatial sub-bins (by, bx) of one bilinear sample of
channel (by * bins_x + bx) * output_dim + d at x = j * (max - min) * (W - 1) / (group - 1) + min *
(W - 1) for the sub-bin [min, max] of [x1 * scale, x2 * scale] (one cell: its centre * (W - 1));
samples outside [0, W - 1] x [0, H - 1] add 0
(positions in f32: whether a sample on the map's edge counts is decided as the runtime does).
The ROIs from the first one whose batch id truncates to -1 (Proposal's end row) on give 0."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _round(v: float) -> float:
    return math.floor(abs(v) + 0.5) * (1.0 if v >= 0 else -1.0)


def _f32(v: float) -> float:
    return float(np.float32(v))


def _bins(lo: float, hi: float, scale: float, group: int, size: int):
    start, end = _f32(_round(lo) * scale), _f32(_round(_f32(hi + 1)) * scale)
    b = max(end - start, 0.1) / group
    return [(min(max(math.floor(j * b + start), 0), size), min(max(math.ceil((j + 1) * b + start), 0), size))
            for j in range(group)]


def _average(v, roi, scale, dim, group, out):
    _, _, height, width = v.shape
    rows, cols = _bins(roi[2], roi[4], scale, group, height), _bins(roi[1], roi[3], scale, group, width)
    plane = v[int(roi[0])]
    for i, (h0, h1) in enumerate(rows):
        for j, (w0, w1) in enumerate(cols):
            if h1 > h0 and w1 > w0:
                for d in range(dim):
                    out[d, i, j] = plane[(d * group + i) * group + j, h0:h1, w0:w1].mean()


def _samples(lo: float, hi: float, scale: float, bins: int, group: int, size: int):
    """[bins][group] sample positions along one axis (None when outside [0, size - 1]), in f32
    (a position on the map's last row must land on the same side of it as the runtime's)."""
    f = np.float32
    start, end = f(lo) * f(scale), f(hi) * f(scale)
    b, last = (end - start) / f(bins), f(size - 1)
    out = []
    for k in range(bins):
        low, high = start + f(k) * b, start + f(k + 1) * b
        pos = [f(0.5) * (low + high) * last] if group == 1 else \
            [f(j) * ((high - low) * last / f(group - 1)) + low * last for j in range(group)]
        out.append([float(p) if 0 <= p <= last else None for p in pos])
    return out


def _bilinear(v, roi, scale, dim, group, bins_x, bins_y, out):
    _, _, height, width = v.shape
    ys = _samples(roi[2], roi[4], scale, bins_y, group, height)
    xs = _samples(roi[1], roi[3], scale, bins_x, group, width)
    plane = v[int(roi[0])]
    for by in range(bins_y):
        for bx in range(bins_x):
            for i, y in enumerate(ys[by]):
                for j, x in enumerate(xs[bx]):
                    if x is None or y is None:
                        continue
                    x0, y0 = math.floor(x), math.floor(y)
                    x1, y1 = min(math.ceil(x), width - 1), min(math.ceil(y), height - 1)
                    fx, fy = x - x0, y - y0
                    for d in range(dim):
                        p = plane[(by * bins_x + bx) * dim + d]
                        top = p[y0, x0] + (p[y0, x1] - p[y0, x0]) * fx
                        bottom = p[y1, x0] + (p[y1, x1] - p[y1, x0]) * fx
                        out[d, i, j] += top + (bottom - top) * fy
    out /= bins_x * bins_y


@oracle("PSROIPooling", "opset1")
def psroi_pooling1(layer, inputs):
    data, rois = inputs
    mode = str(layer.attrs.get("mode", "average"))
    dim, group = int(layer.attrs["output_dim"]), int(layer.attrs.get("group_size", 1))
    bins_x, bins_y = int(layer.attrs.get("spatial_bins_x", 1)), int(layer.attrs.get("spatial_bins_y", 1))
    scale = _f32(layer.attrs["spatial_scale"])
    v = data.astype(np.float64)
    out = np.zeros((rois.shape[0], dim, group, group))
    for k, roi in enumerate(rois.astype(np.float32).astype(np.float64)):
        if int(roi[0]) == -1:  # the end of the ROI list (Proposal's end row): the rest stays 0
            break
        if not 0 <= int(roi[0]) < data.shape[0]:
            raise InvalidLayer(layer, f"ROI batch id {int(roi[0])} out of range")
        if mode == "average":
            _average(v, roi, scale, dim, group, out[k])
        else:
            _bilinear(v, roi, scale, dim, group, bins_x, bins_y, out[k])
    return [out.astype(data.dtype)]
