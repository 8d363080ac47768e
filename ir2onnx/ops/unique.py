"""Unique-10: the distinct elements (or slices along an axis) with their first indices, the
inverse indices and the counts -> ONNX Unique (opset 11).

Unique-10 (data, axis?) -> Unique(sorted, axis), then Cast of the int64 index/count outputs to
``index_element_type``/``count_element_type``. Both sort ascending (slices lexicographically);
unsorted, both keep the order of first occurrence; indices are first occurrences (checked against
OpenVINO element-wise and along each axis). onnxruntime's Unique has kernels for f16, f32, f64,
i8 and i64 only: u8, i16, u16, i32, u32 go through an exact Cast to i64 and back, boolean through
i8, u64 through i64 with the sign bit flipped (BitwiseXor, opset >= 18) so that the order is kept.
The axis must be a constant (ONNX Unique takes it as an attribute). NaN has no defined place in
the spec; onnxruntime merges NaNs with other values and OpenVINO's sorted output with NaNs is not
sorted, so float data with NaNs is not compared.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import const_ints, known_rank, normalize_axis

DIRECT = ("f16", "f32", "f64", "i8", "i64")
WIDEN = ("u8", "i16", "u16", "i32", "u32")
INT64, INT8, INT32 = 7, 3, 6


@lowers("Unique", "opset10")
def unique10(ctx, layer, inputs):
    """Unique-10 (data, axis?) -> [Cast/BitwiseXor], Unique, [Cast back], Cast of the indices and counts."""
    x = inputs[0]
    name = x.etype.name if x.etype else "?"
    g = ctx.b
    kw = {}
    if len(inputs) > 1:
        axis = inputs[1]
        if not axis.is_const:
            raise UnsupportedLayer(layer, "an axis known only at run time is not supported (ONNX Unique "
                                          "takes the axis as an attribute)")
        values = const_ints(layer, axis, "axis")
        if len(values) != 1:
            raise InvalidLayer(layer, f"axis must be one value, got {values}")
        kw["axis"] = normalize_axis(layer, values[0], known_rank(layer, x, 1))
    sort = int(bool(layer.attrs["sorted"]))
    flip = None
    if name in DIRECT:
        data, back = x.name, (lambda y: y)
    elif name in WIDEN or name == "boolean":
        to = INT8 if name == "boolean" else INT64
        data, back = g.Cast(x, to=to), (lambda y: g.Cast(y, to=x.etype.onnx))
    elif name == "u64":
        data = g.Cast(x, to=INT64)
        if sort:
            ctx.require_opset(layer, 18, "sorted Unique on u64 (BitwiseXor keeps the order in int64)")
            flip = g.const(np.iinfo(np.int64).min, np.int64, "sign_bit")
            data = g.BitwiseXor(data, flip)
        back = (lambda y: g.Cast(g.BitwiseXor(y, flip) if flip else y, to=x.etype.onnx))
    else:
        raise UnsupportedLayer(layer, f"Unique on {name} is not supported")
    y, first, inverse, counts = g.Unique(data, sorted=sort, _outputs=4, **kw)
    out = [back(y)]
    for v, attr in ((first, "index_element_type"), (inverse, "index_element_type"), (counts, "count_element_type")):
        etype = getattr(layer.attrs[attr], "name", layer.attrs[attr])
        if etype not in ("i32", "i64"):
            raise InvalidLayer(layer, f"{attr} must be i32 or i64, got {etype}")
        out.append(v if etype == "i64" else g.Cast(v, to=INT32))
    return out
