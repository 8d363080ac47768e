"""Oracle of ROIPooling-2 (method max) from the spec: ROI corners scaled by spatial_scale (in the
data's float type, as OpenVINO's reference does) and rounded half away from zero, the ROI at least
1x1, bins [floor(i * size / n), ceil((i + 1) * size / n)) offset by the ROI start and clipped to
the map; each bin's maximum, 0 for an empty bin."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .registry import oracle


def _round_half_away(v: float) -> int:
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


@oracle("ROIPooling", "opset2")
def roi_pooling2(layer, inputs):
    data, rois = inputs
    if str(layer.attrs.get("method", "max")) != "max":
        raise UnsupportedLayer(layer, "method=bilinear")
    ph, pw = int(layer.attrs["pooled_h"]), int(layer.attrs["pooled_w"])
    scale = np.asarray(layer.attrs["spatial_scale"], np.float32).astype(rois.dtype)
    n, c, height, width = data.shape
    out = np.zeros((rois.shape[0], c, ph, pw), data.dtype)
    for k, roi in enumerate(rois):
        batch = int(roi[0])
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
