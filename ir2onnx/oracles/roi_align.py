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
        out[k] = _bins(v[batch], (ph, pw), (height, width), ratio, lambda u, w: (y1 + u, x1 + w), mode)
    return [out.astype(data.dtype)]


def _bins(planes, pooled, size, ratio, at, mode="avg"):
    """One ROI's pooled bins over every plane of ``planes`` (C, H, W). The ROI, ``size`` = (height,
    width) in its own frame, is cut into ``pooled`` = (ph, pw) bins; bin (i, j) samples a grid of
    ``ratio`` x ``ratio`` points (0: ceil of the bin's size) at the sub-cell centres (u, w), the
    offsets from the ROI's corner in its frame, read bilinearly at ``at(u, w)`` -> (y, x) of the
    map. A bin is the mean of its samples (0 for an empty grid), or with ``mode="max"`` the
    largest of them and 0."""
    (ph, pw), (height, width) = pooled, size
    bin_w, bin_h = width / pw, height / ph
    grid_w = ratio or math.ceil(bin_w)
    grid_h = ratio or math.ceil(bin_h)
    count = grid_w * grid_h
    out = np.zeros((planes.shape[0], ph, pw))
    for c, plane in enumerate(planes):
        for i in range(ph):
            for j in range(pw):
                samples = [bilinear(plane, *at(i * bin_h + (a + 0.5) * bin_h / grid_h,
                                               j * bin_w + (b + 0.5) * bin_w / grid_w))
                           for a in range(max(grid_h, 0)) for b in range(max(grid_w, 0))]
                if mode == "max":
                    out[c, i, j] = max([0.0] + samples)
                else:
                    out[c, i, j] = math.fsum(samples) / count if count > 0 else 0.0
    return out


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

        def at(u, w, height=height, width=width, cos=cos, sin=sin, cx=cx, cy=cy):
            py, px = u - height / 2, w - width / 2  # the box centred at 0, rotated, moved to (cy, cx)
            return py * cos - px * sin + cy, py * sin + px * cos + cx

        out[k] = _bins(v[batch], (ph, pw), (height, width), ratio, at)
    return [out.astype(data.dtype)]
