"""TopK-1, TopK-3 and TopK-11: values and indices along one axis (k constant, or known at run
time: Cast to int64, Reshape to [1], ONNX TopK's k input; OpenVINO and onnxruntime both reject a
k beyond the dim).

mode max/min -> TopK(largest=1/0, sorted=1); sort=index re-sorts the k picked elements by their
index (TopK of the indices, smallest first, then GatherElements of the values); sort=none keeps
the value order. onnxruntime breaks ties by the smaller index, which is OpenVINO's stable order.
Indices are int64 in ONNX: Cast to i32 for index_element_type=i32; f16 data goes through f32.
Integer types onnxruntime's TopK lacks (i8, i16, u8, u16, u32, u64) are ranked by an int64 key
in the same order (see ``_order_key``) and their values gathered (GatherElements) at the indices.

TopK-1 and TopK-3 do not define which of equal values are picked or their order (TopK-11 adds
``stable``). All three versions give the stable order here (smaller index first, onnxruntime's
TopK). OpenVINO's CPU plugin does the same on small slices but not in general (measured with
OpenVINO 2026.4: [1, 300] with k=100 and five distinct values picks other indices), so with ties
only the values of sort=value/none are comparable with OpenVINO.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import const_ints, known_rank, normalize_axis
from ._common.shapes import as_int64, i64

TYPES = ("f32", "f64", "i32", "i64", "f16", "i8", "i16", "u8", "u16", "u32", "u64")
_WIDENED = ("i8", "i16", "u8", "u16", "u32")  # onnxruntime's TopK has no kernel: exact as i64


@lowers("TopK", "opset1")
def topk1(ctx, layer, inputs):
    """TopK-1 (data, k) -> TopK (sort=index: TopK, GatherElements; Cast for i32 indices)."""
    return topk(ctx, layer, inputs)


@lowers("TopK", "opset3")
def topk3(ctx, layer, inputs):
    """TopK-3 (data, k) -> TopK (sort=index: TopK, GatherElements; Cast for i32 indices)."""
    return topk(ctx, layer, inputs)


@lowers("TopK", "opset11")
def topk11(ctx, layer, inputs):
    """TopK-11 (data, k) -> TopK (sort=index: TopK, GatherElements; Cast for i32 indices)."""
    return topk(ctx, layer, inputs)


def topk(ctx, layer, inputs):
    """The shared lowering: k constant or at run time, ties by the smaller index (onnxruntime's order)."""
    x, k_v = inputs
    name = x.etype.name if x.etype else "?"
    if name not in TYPES:
        raise UnsupportedLayer(layer, f"TopK on {name} is not supported ({', '.join(TYPES)})")
    axis = normalize_axis(layer, int(layer.attrs["axis"]), known_rank(layer, x, 1))
    if k_v.etype is not None and not k_v.etype.is_integer:
        raise InvalidLayer(layer, f"k must be of an integer type, got {k_v.etype.name}")
    g = ctx.b
    if k_v.is_const:
        ks = const_ints(layer, k_v, "k")
        if len(ks) != 1 or ks[0] < 0:
            raise InvalidLayer(layer, f"k must be one non-negative value, got {ks}")
        k, dim = ks[0], x.shape[axis]
        if dim is not None and k > dim:
            raise InvalidLayer(layer, f"k={k} exceeds dim {axis} of size {dim}")
        k_name = i64(g, [k], "k")
    else:
        if k_v.shape is not None and int(np.prod(k_v.shape)) != 1:
            raise InvalidLayer(layer, f"k must be one value, got shape {list(k_v.shape)}")
        k_name = g.Reshape(as_int64(g, k_v), i64(g, [1]))
    index_type = getattr(layer.attrs["index_element_type"], "name", layer.attrs["index_element_type"])
    if index_type not in ("i32", "i64"):
        raise InvalidLayer(layer, f"index_element_type must be i32 or i64, got {index_type}")
    keyed = name in _WIDENED or name == "u64"
    data = g.Cast(x, to=1) if name == "f16" else _order_key(ctx, layer, x) if keyed else x
    values, indices = g.TopK(data, k_name, axis=axis, largest=int(layer.attrs["mode"] == "max"),
                             sorted=1, _outputs=2)
    if layer.attrs["sort"] == "index":
        indices, order = g.TopK(indices, k_name, axis=axis, largest=0, sorted=1, _outputs=2)
        values = None if keyed else g.GatherElements(values, order, axis=axis)
    if keyed:  # the data's own values at the picked indices
        values = g.GatherElements(x, indices, axis=axis)
    if name == "f16":
        values = g.Cast(values, to=x.etype.onnx)
    if index_type == "i32":
        indices = g.Cast(indices, to=6)
    return [values, indices]


def _order_key(ctx, layer, x) -> str:
    """An int64 tensor in the order of ``x`` for the types onnxruntime's TopK lacks: narrower
    integers and u32 Cast exactly; u64 with its top bit flipped (BitwiseXor 2^63, opset 18) and
    Cast, which keeps the two's-complement bits: 0 -> -2^63, 2^64 - 1 -> 2^63 - 1."""
    g = ctx.b
    if x.etype.name == "u64":
        ctx.require_opset(layer, 18, "TopK on u64 (BitwiseXor)")
        x = g.BitwiseXor(x, g.const(np.uint64(1 << 63), np.uint64, "top_bit"))
    return g.Cast(x, to=7)
