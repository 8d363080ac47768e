"""Range-4 -> Range, folded to a constant when start, stop and step are.

ONNX Range takes one type for its three inputs (f32, f64, i16, i32, i64), so the inputs get a
Cast: for integer outputs to ``output_type`` first (floats toward zero, as the spec says), for
float outputs straight to the working type (the spec computes in an accumulation type at least
as wide as the output: f16 outputs are counted and accumulated in f32, then rounded once).
8/16-bit integer outputs run in i32 and are cast back (exact).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.element_types import element_type
from ..lowering.inputs import FOLD_ELEMENTS, foldable
from ..lowering.registry import lowers

_RANGE_TYPES = {"f32": 1, "f64": 11, "i16": 5, "i32": 6, "i64": 7}
_WIDER = {"f16": "f32", "bf16": "f32", "i8": "i32", "u8": "i32", "u16": "i32", "u32": "i64"}


def range_values(start: float, stop: float, step: float, dtype: np.dtype) -> np.ndarray:
    """Range-4 at convert time: for integer outputs the inputs are cast to the output type
    (toward zero); float outputs count max(ceil((stop - start) / step), 0) in float64."""
    if np.dtype(dtype).kind in "iu":
        start, stop, step = (math.trunc(v) for v in (start, stop, step))
        if step == 0:
            raise ValueError("step is zero")
        count = max(-((start - stop) // step), 0)
        return (start + np.arange(count, dtype=np.int64) * step).astype(dtype)
    start, stop, step = (float(v) for v in (start, stop, step))
    if step == 0:
        raise ValueError("step is zero")
    count = max(math.ceil((stop - start) / step), 0)
    return (start + np.arange(count, dtype=np.float64) * step).astype(dtype)


def _scalar(layer, v, what: str) -> None:
    if v.shape is not None and int(np.prod(v.shape, dtype=np.int64)) != 1:
        raise InvalidLayer(layer, f"{what} must be a scalar, got shape {list(v.shape)}")


def _range(ctx, layer, inputs, out):
    start, stop, step = inputs
    for v, what in zip(inputs, ("start", "stop", "step")):
        _scalar(layer, v, what)
    if out.numpy is None or out.name == "boolean":
        raise UnsupportedLayer(layer, f"output_type {out.name} is not supported")
    if foldable(start, stop, step):
        vals = [np.asarray(v.value()).reshape(-1)[0].item() for v in inputs]
        try:
            values = range_values(*vals, out.numpy)
        except ValueError:
            raise InvalidLayer(layer, "step is zero after the cast to output_type") from None
        if values.size <= FOLD_ELEMENTS:
            return [values]
    g = ctx.b
    work = out.name if out.name in _RANGE_TYPES else _WIDER.get(out.name)
    if work is None:
        raise UnsupportedLayer(layer, f"Range with output_type {out.name} is not supported")
    to = _RANGE_TYPES[work]

    def cast(v):  # integer outputs: to output_type first (floats truncate); then the working type
        x = v.name
        if out.is_integer and v.etype != out:
            x = g.Cast(x, to=out.onnx)
        if v.etype.name != work or (out.is_integer and work != out.name):
            x = g.Cast(x, to=to)
        return x if v.shape == () else g.Reshape(x, g.const([], np.int64, "scalar_shape"))

    result = g.Range(cast(start), cast(stop), cast(step))
    return [result if work == out.name else g.Cast(result, to=out.onnx)]


@lowers("Range", "opset4")
def range4(ctx, layer, inputs):
    """Range-4 -> Range (Cast of the inputs to output_type; 8-bit/16-bit outputs via i32/f32)."""
    out = layer.attrs["output_type"]
    out = element_type(out) if isinstance(out, str) else out
    return _range(ctx, layer, inputs, out)
