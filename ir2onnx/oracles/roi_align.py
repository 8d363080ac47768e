"""Oracles of ROIAlign-3/-9 (and ROIAlignRotated-15, below) from the spec, in float64: per ROI, start = ROI * scale
(asymmetric: width and height at least 1), ROI * scale - 0.5 (half_pixel_for_nn) or
(ROI + 0.5) * scale - 0.5 (half_pixel); each of the pooled_h x pooled_w bins averages a
sampling_ratio grid (0: ceil(bin size)) of bilinear samples at the sub-cell centres; a sample
outside [-1, size] counts as 0, others are clamped into the map. mode=max takes the largest
sample of the bin and 0 (OpenVINO's reference starts the pooled value at 0, and its CPU plugin
gives the same: a bin of negative samples is 0)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .registry import oracle
from .roi_sampling import bilinear


def _roi_align(layer, inputs, aligned: str):
    data, rois, indices = inputs
    mode = layer.attrs["mode"]
    if mode not in ("avg", "max"):
        raise UnsupportedLayer(layer, f"mode={mode}")
    ph, pw, ratio = (int(layer.attrs[k]) for k in ("pooled_h", "pooled_w", "sampling_ratio"))
    scale = float(layer.attrs["spatial_scale"])
    if data.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 4 or indices.shape != (rois.shape[0],):
        raise InvalidLayer(layer, f"shapes {data.shape}, {rois.shape}, {indices.shape} do not fit the spec")
    v = data.astype(np.float64)
    shift, offset = {"asymmetric": (0.0, 0.0), "half_pixel_for_nn": (0.0, -0.5),
                     "half_pixel": (0.5, -0.5)}[aligned]
    out = np.zeros((rois.shape[0], data.shape[1], ph, pw))
    for k, roi in enumerate(rois.astype(np.float64)):
        batch = int(indices[k])
        if not 0 <= batch < data.shape[0]:
            raise InvalidLayer(layer, f"batch index {batch} out of range")
        x1, y1, x2, y2 = ((c + shift) * scale + offset for c in roi)
        width, height = x2 - x1, y2 - y1
        if aligned == "asymmetric":
            width, height = max(width, 1.0), max(height, 1.0)
        bin_w, bin_h = width / pw, height / ph
        grid_w = ratio or math.ceil(bin_w)
        grid_h = ratio or math.ceil(bin_h)
        count = grid_w * grid_h
        for c in range(data.shape[1]):
            plane = v[batch, c]
            for i in range(ph):
                for j in range(pw):
                    samples = [bilinear(plane, y1 + i * bin_h + (a + 0.5) * bin_h / grid_h,
                                         x1 + j * bin_w + (b + 0.5) * bin_w / grid_w)
                               for a in range(max(grid_h, 0)) for b in range(max(grid_w, 0))]
                    if mode == "max":
                        out[k, c, i, j] = max([0.0] + samples)
                    else:
                        out[k, c, i, j] = math.fsum(samples) / count if count > 0 else 0.0
    return [out.astype(data.dtype)]


@oracle("ROIAlign", "opset3")
def roi_align3(layer, inputs):
    return _roi_align(layer, inputs, "asymmetric")


@oracle("ROIAlign", "opset9")
def roi_align9(layer, inputs):
    return _roi_align(layer, inputs, str(layer.attrs.get("aligned_mode", "asymmetric")))


@oracle("ROIAlignRotated", "opset15")
def roi_align_rotated15(layer, inputs):
    """ROIAlignRotated-15 from the spec, in float64: ROI (cx, cy, w, h, angle) scaled by
    spatial_scale, centre shifted by -0.5; each bin averages a sampling_ratio grid (0: ceil(bin
    size)) of points of the unrotated box centred at 0, rotated by the angle (counter-clockwise,
    negated if clockwise_mode) and moved to the centre, then bilinearly sampled as ROIAlign."""
    data, rois, indices = inputs
    ph, pw, ratio = (int(layer.attrs[k]) for k in ("pooled_h", "pooled_w", "sampling_ratio"))
    scale = float(layer.attrs["spatial_scale"])
    clockwise = str(layer.attrs.get("clockwise_mode", "false")).lower() in ("true", "1")
    if data.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 5 or indices.shape != (rois.shape[0],):
        raise InvalidLayer(layer, f"shapes {data.shape}, {rois.shape}, {indices.shape} do not fit the spec")
    v = data.astype(np.float64)
    out = np.zeros((rois.shape[0], data.shape[1], ph, pw))
    for k, roi in enumerate(rois.astype(np.float64)):
        batch = int(indices[k])
        if not 0 <= batch < data.shape[0]:
            raise InvalidLayer(layer, f"batch index {batch} out of range")
        cx, cy = roi[0] * scale - 0.5, roi[1] * scale - 0.5
        width, height = roi[2] * scale, roi[3] * scale
        theta = -roi[4] if clockwise else roi[4]
        cos, sin = math.cos(theta), math.sin(theta)
        bin_w, bin_h = width / pw, height / ph
        grid_w = ratio or math.ceil(bin_w)
        grid_h = ratio or math.ceil(bin_h)
        count = grid_w * grid_h
        for c in range(data.shape[1]):
            plane = v[batch, c]
            for i in range(ph):
                for j in range(pw):
                    samples = []
                    for a in range(max(grid_h, 0)):
                        py = -height / 2 + i * bin_h + (a + 0.5) * bin_h / grid_h
                        for b in range(max(grid_w, 0)):
                            px = -width / 2 + j * bin_w + (b + 0.5) * bin_w / grid_w
                            samples.append(bilinear(plane, py * cos - px * sin + cy, py * sin + px * cos + cx))
                    out[k, c, i, j] = math.fsum(samples) / count if count > 0 else 0.0
    return [out.astype(data.dtype)]
