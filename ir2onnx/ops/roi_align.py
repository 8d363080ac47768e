"""ROIAlign-3/-9 (avg mode) -> ONNX RoiAlign.

Each ROI (x1, y1, x2, y2) of ``rois``, scaled by ``spatial_scale``, is split into pooled_h x
pooled_w bins; each bin averages bilinear samples on a sampling_ratio grid (0: ceil(bin size)),
samples outside [-1, size] counting as zero. onnxruntime's RoiAlign computes the same (measured
equal to OpenVINO's within 2.4e-7 on ONNX models read by OpenVINO). The aligned modes of -9:
* asymmetric (and all of -3): ROI * scale, width and height at least 1 -> coordinate_transformation_mode
  output_half_pixel (RoiAlign-10's only behaviour, so any opset >= 14);
* half_pixel_for_nn: ROI * scale - 0.5, no minimum -> half_pixel (opset >= 16);
* half_pixel: (ROI + 0.5) * scale - 0.5 -> Add 0.5 to the ROIs, then half_pixel (the same float
  operations in the same order).
mode=max is refused: onnxruntime's RoiAlign takes the max of the weighted corner values of each
sample (and warns that it is wrong), OpenVINO's spec and runtime the max of the interpolated
samples. f16 data runs in f32 between Casts (onnxruntime's RoiAlign takes f32/f64).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers

_INT64, _FLOAT = 7, 1  # TensorProto

_CTM = {"asymmetric": "output_half_pixel", "half_pixel_for_nn": "half_pixel", "half_pixel": "half_pixel"}


def _roi_align(ctx, layer, inputs, aligned: str):
    data, rois, indices = inputs
    for v, what in ((data, "data"), (rois, "rois")):
        if v.etype is None or v.etype.name not in ("f16", "f32", "f64"):
            raise UnsupportedLayer(layer, f"{what} of type {v.etype.name if v.etype else '?'} is not supported "
                                          "(f16, f32, f64 are)")
    if data.etype != rois.etype:
        raise InvalidLayer(layer, f"data ({data.etype.name}) and rois ({rois.etype.name}) differ in type")
    if not indices.etype.is_integer:
        raise InvalidLayer(layer, f"batch_indices must be integers, not {indices.etype.name}")
    if data.rank not in (None, 4):
        raise InvalidLayer(layer, f"data must be 4-D [N, C, H, W], got rank {data.rank}")
    if rois.shape is not None and (len(rois.shape) != 2 or rois.shape[1] not in (None, 4)):
        raise InvalidLayer(layer, f"rois must be [num_rois, 4], got {list(rois.shape)}")
    mode = str(layer.attrs["mode"])
    if mode != "avg":
        raise UnsupportedLayer(layer, f"mode={mode} is not supported: onnxruntime's RoiAlign max pools the "
                                      "weighted corner values, OpenVINO the bilinear samples")
    ph, pw, ratio = (int(layer.attrs[k]) for k in ("pooled_h", "pooled_w", "sampling_ratio"))
    scale = float(layer.attrs["spatial_scale"])
    if ph < 1 or pw < 1 or ratio < 0 or scale <= 0:
        raise InvalidLayer(layer, f"pooled_h {ph}, pooled_w {pw} must be >= 1, sampling_ratio {ratio} >= 0 "
                                  f"and spatial_scale {scale} > 0")
    g = ctx.b
    ctm = _CTM[aligned]
    if ctm != "output_half_pixel":
        ctx.require_opset(layer, 16, f"aligned_mode={aligned}")
    cast = data.etype.name == "f16"
    x = g.Cast(data, to=_FLOAT) if cast else data.name
    boxes = g.Cast(rois, to=_FLOAT) if cast else rois.name
    if aligned == "half_pixel":
        boxes = g.Add(boxes, g.const(0.5, np.float32 if cast else rois.etype.numpy, "half"))
    idx = indices.name if indices.etype.name == "i64" else g.Cast(indices, to=_INT64)
    kw = {"coordinate_transformation_mode": ctm} if ctx.opset >= 16 else {}
    out = g.RoiAlign(x, boxes, idx, mode="avg", output_height=ph, output_width=pw, sampling_ratio=ratio,
                     spatial_scale=scale, **kw)
    return [g.Cast(out, to=data.etype.onnx) if cast else out]


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
