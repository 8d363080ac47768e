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
