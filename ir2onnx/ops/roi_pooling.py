"""ROIPooling-2 (method max) -> ONNX MaxRoiPool.

Each ROI (batch id, x1, y1, x2, y2) is scaled and rounded to whole cells (round half away from
zero), forced to at least 1x1, and split into pooled_h x pooled_w bins [floor(i * size / n),
ceil((i + 1) * size / n)) clipped to the map; each bin takes its maximum, an empty bin 0. ONNX
MaxRoiPool is that same Caffe definition (onnxruntime measured equal to OpenVINO on ONNX models
read by OpenVINO). method=bilinear (a bilinear resampling at normalised coordinates) has no ONNX
counterpart and is refused. onnxruntime's MaxRoiPool takes f32: f16 data is Cast to f32 and
back (exact: every value comes through unchanged); f64 is refused (f32 would round it).
"""
from __future__ import annotations

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers

_FLOAT = 1  # TensorProto.FLOAT


@lowers("ROIPooling", "opset2")
def roi_pooling2(ctx, layer, inputs):
    """ROIPooling-2 (input, coords; method max) -> MaxRoiPool (f16: Cast, MaxRoiPool, Cast)."""
    data, rois = inputs
    for v, what in ((data, "input"), (rois, "coords")):
        if v.etype is None or v.etype.name not in ("f16", "f32"):
            raise UnsupportedLayer(layer, f"{what} of type {v.etype.name if v.etype else '?'} is not supported "
                                          "(onnxruntime's MaxRoiPool takes f32; f16 goes through it exactly)")
    if data.rank not in (None, 4):
        raise InvalidLayer(layer, f"input must be 4-D [N, C, H, W], got rank {data.rank}")
    if rois.shape is not None and (len(rois.shape) != 2 or rois.shape[1] not in (None, 5)):
        raise InvalidLayer(layer, f"coords must be [num_rois, 5], got {list(rois.shape)}")
    method = str(layer.attrs.get("method", "max"))
    if method != "max":
        raise UnsupportedLayer(layer, f"method={method} has no ONNX counterpart (MaxRoiPool is max only)")
    ph, pw = int(layer.attrs["pooled_h"]), int(layer.attrs["pooled_w"])
    scale = float(layer.attrs["spatial_scale"])
    if ph < 1 or pw < 1 or scale <= 0:
        raise InvalidLayer(layer, f"pooled_h {ph} and pooled_w {pw} must be >= 1, spatial_scale {scale} > 0")
    g = ctx.b
    x = g.Cast(data, to=_FLOAT) if data.etype.name == "f16" else data.name
    boxes = g.Cast(rois, to=_FLOAT) if rois.etype.name == "f16" else rois.name
    out = g.MaxRoiPool(x, boxes, pooled_shape=[ph, pw], spatial_scale=scale)
    return [g.Cast(out, to=data.etype.onnx) if data.etype.name == "f16" else out]
