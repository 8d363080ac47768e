"""Oracle of ROIPooling-2 from the spec. method max: ROI corners scaled by spatial_scale (in the
data's float type, as OpenVINO's reference does) and rounded half away from zero, the ROI at least
1x1, bins [floor(i * size / n), ceil((i + 1) * size / n)) offset by the ROI start and clipped to
the map; each bin's maximum, 0 for an empty bin. method bilinear (float64): ROI corners are
fractions of the map; cell i samples y = y1 * (H - 1) + i * (y2 - y1) * (H - 1) / (pooled_h - 1)
((y1 + y2) / 2 * (H - 1) for one cell), x likewise; a sample outside [0, size - 1] is 0, others
interpolate bilinearly between floor and ceil. Both: the ROIs from the first one whose batch id
truncates to -1 (Proposal's end row) on give 0 (OpenVINO's CPU plugin, measured)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _round_half_away(v: float) -> int:
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def _sample(start: float, end: float, size: int, i: int, pooled: int) -> float:
    if pooled == 1:
        return (start + end) / 2 * (size - 1)
    return start * (size - 1) + i * (end - start) * (size - 1) / (pooled - 1)


def _bilinear(data, rois, ph: int, pw: int):
    n, c, height, width = data.shape
    v = data.astype(np.float64)
    out = np.zeros((rois.shape[0], c, ph, pw))
    for k, roi in enumerate(rois.astype(np.float64)):
        batch = int(roi[0])
        if batch == -1:
            break
        for i in range(ph):
            y = _sample(roi[2], roi[4], height, i, ph)
            for j in range(pw):
                x = _sample(roi[1], roi[3], width, j, pw)
                if not (0 <= y <= height - 1 and 0 <= x <= width - 1):
                    continue
                y0, x0 = math.floor(y), math.floor(x)
                y1, x1 = min(math.ceil(y), height - 1), min(math.ceil(x), width - 1)
                fy, fx = y - y0, x - x0
                plane = v[batch]
                top = plane[:, y0, x0] + (plane[:, y0, x1] - plane[:, y0, x0]) * fx
                bottom = plane[:, y1, x0] + (plane[:, y1, x1] - plane[:, y1, x0]) * fx
                out[k, :, i, j] = top + (bottom - top) * fy
    return out.astype(data.dtype)


@oracle("ROIPooling", "opset2")
def roi_pooling2(layer, inputs):
    data, rois = inputs
    ph, pw = int(layer.attrs["pooled_h"]), int(layer.attrs["pooled_w"])
    if str(layer.attrs.get("method", "max")) == "bilinear":
        return [_bilinear(data, rois, ph, pw)]
    scale = np.asarray(layer.attrs["spatial_scale"], np.float32).astype(rois.dtype)
    n, c, height, width = data.shape
    out = np.zeros((rois.shape[0], c, ph, pw), data.dtype)
    for k, roi in enumerate(rois):
        batch = int(roi[0])
        if batch == -1:  # the end of the ROI list: the rest stays 0
            break
        if not 0 <= batch < n:
            raise InvalidLayer(layer, f"ROI batch id {batch} out of range")
        x1, y1, x2, y2 = (_round_half_away(float(roi[i] * scale)) for i in range(1, 5))
        roi_h, roi_w = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        for i in range(ph):
            h0 = min(max(math.floor(i * roi_h / ph) + y1, 0), height)
            h1 = min(max(math.ceil((i + 1) * roi_h / ph) + y1, 0), height)
            for j in range(pw):
                w0 = min(max(math.floor(j * roi_w / pw) + x1, 0), width)
                w1 = min(max(math.ceil((j + 1) * roi_w / pw) + x1, 0), width)
                if h1 > h0 and w1 > w0:
                    out[k, :, i, j] = data[batch, :, h0:h1, w0:w1].reshape(c, -1).max(axis=1)
    return [out]
