"""CumSum-3 -> CumSum(exclusive, reverse) with the axis constant (default 0) or known at run time
(Cast to an int64 scalar: ONNX's CumSum takes a negative axis as OpenVINO does); f16 goes through
f32 (onnxruntime's CumSum takes f32, f64, i32, i64)."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import const_ints, known_rank, normalize_axis
from ._common.shapes import as_int64, i64

TYPES = ("f32", "f64", "i32", "i64", "f16")


@lowers("CumSum", "opset3")
def cumsum(ctx, layer, inputs):
    """CumSum-3 (data, axis?) -> CumSum (Cast around f16)."""
    x = inputs[0]
    name = x.etype.name if x.etype else "?"
    if name not in TYPES:
        raise UnsupportedLayer(layer, f"CumSum on {name} is not supported ({', '.join(TYPES)})")
    known_rank(layer, x, 1)
    axis, g = 0, ctx.b
    if len(inputs) > 1 and not inputs[1].is_const:
        a = inputs[1]
        if a.shape is not None and int(np.prod(a.shape)) != 1:
            raise InvalidLayer(layer, f"axis must be a scalar, got shape {list(a.shape)}")
        axis_name = g.Reshape(as_int64(g, a), i64(g, [], "scalar_shape"))
    elif len(inputs) > 1:
        values = const_ints(layer, inputs[1], "axis")
        if len(values) != 1:
            raise InvalidLayer(layer, f"axis must be a scalar, got {values}")
        axis = values[0]
    if len(inputs) == 1 or inputs[1].is_const:
        axis_name = i64(g, normalize_axis(layer, axis, x.rank), "axis")
    data = g.Cast(x, to=1) if name == "f16" else x
    out = g.CumSum(data, axis_name, exclusive=int(layer.attrs["exclusive"]),
                   reverse=int(layer.attrs["reverse"]))
    return [g.Cast(out, to=x.etype.onnx) if name == "f16" else out]
