"""CumSum-3 -> CumSum(exclusive, reverse) with the axis as a constant (default 0); f16 goes
through f32 (onnxruntime's CumSum takes f32, f64, i32, i64)."""
from __future__ import annotations

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.inputs import const_ints, known_rank, normalize_axis
from ..lowering.registry import lowers
from ..lowering.shapes import i64

TYPES = ("f32", "f64", "i32", "i64", "f16")


@lowers("CumSum", "opset3")
def cumsum(ctx, layer, inputs):
    """CumSum-3 (data, axis?) -> CumSum (Cast around f16)."""
    x = inputs[0]
    name = x.etype.name if x.etype else "?"
    if name not in TYPES:
        raise UnsupportedLayer(layer, f"CumSum on {name} is not supported ({', '.join(TYPES)})")
    known_rank(layer, x, 1)
    axis = 0
    if len(inputs) > 1:
        values = const_ints(layer, inputs[1], "axis")
        if len(values) != 1:
            raise InvalidLayer(layer, f"axis must be a scalar, got {values}")
        axis = values[0]
    axis = normalize_axis(layer, axis, x.rank)
    g = ctx.b
    data = g.Cast(x, to=1) if name == "f16" else x
    out = g.CumSum(data, i64(g, axis, "axis"), exclusive=int(layer.attrs["exclusive"]),
                   reverse=int(layer.attrs["reverse"]))
    return [g.Cast(out, to=x.etype.onnx) if name == "f16" else out]
