"""Oracle of FakeQuantize-1, in float64 on whole (broadcast) arrays, for every element:

    x on il's side of il (x <= il if il <= ih, x >= il if il > ih)  -> ol
    x on ih's side of ih (x >  ih if il <= ih, x <= ih if il > ih)  -> oh
    else  -> round((x - il) / (ih - il) * (levels - 1)) / (levels - 1) * (oh - ol) + ol

with round half to even. For il <= ih this is the spec text; for il > ih (the IR OpenVINO's ONNX
frontend writes for QuantizeLinear with a negative scale) it is what the source ONNX model
computes, the spec's ``x <= min(il, ih) -> ol`` is not. The ranges broadcast to X by numpy rules
(``auto_broadcast='none'``: equal shapes). OpenVINO's CPU plugin deviates for il > ih and il == ih
(NaN); see :mod:`ir2onnx.ops.quantization`.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .registry import oracle


def _out_shape(layer, shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    mode = layer.attrs.get("auto_broadcast", "numpy")
    if mode == "none":
        if any(s != shapes[0] for s in shapes):
            raise InvalidLayer(layer, f"auto_broadcast='none' needs equal shapes, got {shapes}")
        return shapes[0]
    if mode != "numpy":
        raise UnsupportedLayer(layer, f"auto_broadcast='{mode}'")
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    for s in shapes:
        for i, d in enumerate((1,) * (rank - len(s)) + tuple(s)):
            if d != out[i] and 1 not in (d, out[i]):
                raise InvalidLayer(layer, f"range shapes {shapes[1:]} do not broadcast to X {shapes[0]}")
            out[i] = max(out[i], d) if d != 1 else out[i]
    return tuple(out)


@oracle("FakeQuantize", "opset1")
def fake_quantize(layer, inputs):
    levels = int(layer.attrs["levels"])
    if levels < 2:
        raise InvalidLayer(layer, f"levels={levels}: FakeQuantize needs levels >= 2")
    x = inputs[0]
    if x.dtype.kind != "f" and x.dtype.name != "bfloat16":
        raise InvalidLayer(layer, "X must be a floating-point tensor")
    shape = _out_shape(layer, [a.shape for a in inputs])
    v, il, ih, ol, oh = (np.broadcast_to(a.astype(np.float64), shape) for a in inputs)
    steps = levels - 1
    ordered = il <= ih
    low = np.where(ordered, v <= il, v >= il)
    high = np.where(ordered, v > ih, v <= ih)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        level = np.rint((v - il) / (ih - il) * steps)  # round half to even
        inner = level / steps * (oh - ol) + ol
    out = np.where(low, ol, np.where(high, oh, inner))
    return [out.astype(x.dtype)]


@oracle("FakeConvert", "opset13")
def fake_convert(layer, inputs):
    """FakeConvert-13 as OpenVINO's CPU plugin computes it (the spec's text divides by the scale and
    converts without saturation; NNCF writes FakeConvert for OpenVINO, whose arithmetic is the
    model's): ``y = f32(x * scale - shift)`` rounded to f16, clamped to the f8 type's finite range
    (NaN -> -max), rounded to f8 (nearest even), then ``(q + shift) * f32(1 / scale)``."""
    f8 = {"f8e4m3": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2}[layer.attrs["destination_type"]]
    x = inputs[0]
    if x.dtype.kind != "f" and x.dtype.name != "bfloat16":
        raise InvalidLayer(layer, "data must be a floating-point tensor")
    f32 = lambda a: np.asarray(a).astype(np.float32)  # noqa: E731
    scale = f32(inputs[1])
    shift = f32(inputs[2]) if len(inputs) > 2 else None
    top = np.float32(ml_dtypes.finfo(f8).max)
    with np.errstate(over="ignore", invalid="ignore"):
        y = f32(x) * scale
        y = (y if shift is None else y - shift).astype(np.float16).astype(np.float32)
        y = np.where(np.isnan(y), -top, np.clip(y, -top, top))
        q = y.astype(f8).astype(np.float32)
        out = (q if shift is None else q + shift) * (np.float32(1) / scale)  # no shift: -0.0 stays
    return [out.astype(x.dtype)]
