"""Bucketize-3 and SearchSorted-15 -> comparisons of every value with every boundary, Not, Cast,
ReduceSum: the index a binary search finds in a sorted sequence is the number of elements it
passes.

A value v passes an element e when ``!(e >= v)`` (Bucketize with_right_bound=true, SearchSorted
right_mode=false: the first index whose element is >= v) or ``!(e > v)`` (the other two: the
first whose element is > v). For sorted boundaries without NaN this is the count of e < v (or
e <= v); a NaN value passes every element and gets the last index, as torch.bucketize and
torch.searchsorted give (OpenVINO's frontends write these layers for them; OpenVINO's runtime
gives 0 there, docs/deviations.md). Values and boundaries are compared in float64 (floats: exact and
order-preserving) or int64 (integers); an integer compared with floats goes through the float
type first (f32, or f64 beside f64), as C++'s comparison of mixed types does.
"""
from __future__ import annotations

from onnx import TensorProto

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.indices import known_ranks, output_type
from ._common.shapes import i64

_FLOATS = ("f16", "bf16", "f32", "f64")


def _common(ctx, layer, a, b) -> tuple[str, str]:
    """``a`` and ``b`` Cast to one type in which onnxruntime compares them as the spec's C++ does."""
    g = ctx.b
    for v in (a, b):
        ctx.onnx_type(layer, v.etype)
        if v.etype.name == "boolean" or (v.etype.numpy is None and v.etype.name != "bf16"):
            raise UnsupportedLayer(layer, f"element type {v.etype.name} is not numeric")
    fa, fb = a.etype.name in _FLOATS, b.etype.name in _FLOATS
    if not fa and not fb:
        if "u64" in (a.etype.name, b.etype.name):
            raise UnsupportedLayer(layer, "u64 values or boundaries are not supported (compared in int64)")
        return tuple(v.name if v.etype.name == "i64" else g.Cast(v, to=TensorProto.INT64) for v in (a, b))
    wide = TensorProto.DOUBLE
    via = TensorProto.DOUBLE if "f64" in (a.etype.name, b.etype.name) else TensorProto.FLOAT
    out = []
    for v, is_float in ((a, fa), (b, fb)):
        x = v.name if is_float else g.Cast(v, to=via)
        out.append(x if v.etype.name == "f64" else g.Cast(x, to=wide))
    return out[0], out[1]


def _count(ctx, layer, elements, values, first_greater: bool, out_type: int) -> list[str]:
    """For every value [..., m, 1] the number of elements [..., 1, n] it passes."""
    g = ctx.b
    cmp = g.Greater(elements, values) if first_greater else g.GreaterOrEqual(elements, values)
    passed = g.Cast(g.Not(cmp), to=TensorProto.INT64)
    total = g.ReduceSum(passed, i64(g, [-1]), keepdims=0)
    return [total if out_type == TensorProto.INT64 else g.Cast(total, to=out_type)]


@lowers("Bucketize", "opset3")
def bucketize3(ctx, layer, inputs):
    """Bucketize-3 (data, buckets; output_type, with_right_bound) -> Cast, Unsqueeze,
    GreaterOrEqual (with_right_bound) or Greater, Not, Cast, ReduceSum."""
    data, buckets = inputs
    known_ranks(layer, buckets)
    if buckets.rank != 1:
        raise InvalidLayer(layer, f"buckets must be 1-D, got rank {buckets.rank}")
    out = TensorProto.INT64 if output_type(layer) == "i64" else TensorProto.INT32
    x, b = _common(ctx, layer, data, buckets)
    g = ctx.b
    return _count(ctx, layer, b, g.Unsqueeze(x, i64(g, [-1])), not layer.attrs["with_right_bound"], out)


@lowers("SearchSorted", "opset15")
def search_sorted15(ctx, layer, inputs):
    """SearchSorted-15 (sorted_sequence [..., n], values [..., m]; right_mode, output_type) ->
    Cast, Unsqueeze, GreaterOrEqual (right_mode=false) or Greater, Not, Cast, ReduceSum."""
    seq, values = inputs
    known_ranks(layer, seq, values)
    if seq.rank < 1 or values.rank < 1 or (seq.rank != 1 and seq.rank != values.rank):
        raise InvalidLayer(layer, f"sorted_sequence of rank {seq.rank} does not fit values of rank {values.rank}")
    if seq.etype != values.etype:
        raise InvalidLayer(layer, f"sorted_sequence is {seq.etype.name} but values are {values.etype.name}")
    out = TensorProto.INT64 if output_type(layer) == "i64" else TensorProto.INT32
    s, v = _common(ctx, layer, seq, values)
    g = ctx.b
    elements = g.Unsqueeze(s, i64(g, [-2])) if seq.rank > 1 else s
    return _count(ctx, layer, elements, g.Unsqueeze(v, i64(g, [-1])), layer.attrs["right_mode"], out)
