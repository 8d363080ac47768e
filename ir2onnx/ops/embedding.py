"""The embedding bags: EmbeddingBagOffsetsSum-3, EmbeddingBagOffsets-15, EmbeddingBagPackedSum-3,
EmbeddingBagPacked-15 and EmbeddingSegmentsSum-3 -> Gather, Mul, ScatterND(reduction add) into a
zero buffer with one extra row, Slice.

Every index j of ``indices`` is given the row ``bag(j) + 1`` of a ``[batch + 1, ...]`` buffer (row 0
collects what belongs to no bag: indices before ``offsets[0]``, and the default rows of bags that
are not empty); ScatterND adds the gathered (and weighted) rows in index order from zero, as the
specs' loops and OpenVINO's reference do. An empty bag gets ``emb_table[default_index]``
(unweighted) when a default index is given and not -1 (Offsets), else zeros. ``mean`` divides by
the bag size (1 for an empty bag). f16/bf16 accumulate in f32; integers wrap in their type
(ScatterND adds in it). ScatterND's add needs ONNX opset 16.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.indices import i64_indices, known_ranks
from ._common.shapes import dims_of, i64

_INT64 = TensorProto.INT64


def _ints(g, shape, value: int) -> str:
    """An int64 tensor of ``shape`` (a 1-D int64 tensor name) filled with ``value``."""
    return g.ConstantOfShape(shape, value=helper.make_tensor("v", _INT64, [1], [value]))


def _check_table(ctx, layer, emb, *others):
    known_ranks(layer, emb, *others)
    ctx.onnx_type(layer, emb.etype)
    if emb.etype.name == "boolean" or emb.etype.numpy is None and not emb.etype.name.startswith("bf"):
        raise UnsupportedLayer(layer, f"emb_table of type {emb.etype.name} is not numeric")
    if emb.rank < 1:
        raise InvalidLayer(layer, "emb_table must have rank >= 1")
    ctx.require_opset(layer, 16, f"{layer.type} (ScatterND with reduction add)")


def _scalar_index(ctx, layer, v, what):
    """An i32/i64 scalar (or one-element) input as an int64 [1] tensor name."""
    if v.shape is not None and int(np.prod([d for d in v.shape if d is not None])) > 1:
        raise InvalidLayer(layer, f"{what} must be a scalar, got shape {v.shape}")
    return ctx.b.Reshape(i64_indices(ctx, layer, v), i64(ctx.b, [1]))


def _bags(ctx, layer, emb, flat_idx, rows, weights, batch, sizes, default, reduction, minus_one_is_zero=True):
    """The bags of ``emb`` (see the module docstring). ``flat_idx``, ``rows``: int64 [n];
    ``batch``: int64 [1]; ``sizes``: int64 [batch]; ``default``: int64 [1] or None."""
    g = ctx.b
    widen = emb.etype.name in ("f16", "bf16")
    kind = "f" if widen or emb.etype.name.startswith("bf") else np.dtype(emb.etype.numpy).kind
    if reduction == "mean" and kind != "f":
        raise UnsupportedLayer(layer, f"reduction 'mean' on {emb.etype.name}: the spec divides in floating point, "
                                      "OpenVINO's reference truncates in the element type")
    acc_type = TensorProto.FLOAT if widen else emb.etype.onnx
    acc_np = np.float32 if widen else np.dtype(emb.etype.numpy)
    part = g.Gather(emb, flat_idx, axis=0)
    if widen:
        part = g.Cast(part, to=acc_type)
    if weights is not None:
        w = g.Cast(weights, to=acc_type) if widen else weights.name
        part = g.Mul(part, g.Unsqueeze(w, i64(g, list(range(1, emb.rank)))) if emb.rank > 1 else w)
    tail = dims_of(g, emb, 1) if emb.rank > 1 else None
    buf_shape = g.Concat(g.Add(batch, i64(g, [1])), tail, axis=0) if tail else g.Add(batch, i64(g, [1]))
    zero = helper.make_tensor("zero", acc_type, [1], np.zeros(1, acc_np).tobytes(), raw=True)
    out = g.ScatterND(g.ConstantOfShape(buf_shape, value=zero), g.Unsqueeze(rows, i64(g, [1])), part,
                      reduction="add")
    if default is not None:
        empty = g.Equal(sizes, i64(g, [0]))
        if minus_one_is_zero:
            empty = g.And(empty, g.Not(g.Equal(default, i64(g, [-1]))))
        bag_rows = g.Range(i64(g, 1), g.Add(g.Squeeze(batch), i64(g, 1)), i64(g, 1))
        targets = g.Where(empty, bag_rows, i64(g, [0]))
        row = g.Gather(emb, g.Max(default, i64(g, [0])), axis=0)
        if widen:
            row = g.Cast(row, to=acc_type)
        rows_shape = g.Concat(batch, tail, axis=0) if tail else batch
        out = g.ScatterND(out, g.Unsqueeze(targets, i64(g, [1])), g.Expand(row, rows_shape), reduction="add")
    out = g.Slice(out, i64(g, [1]), i64(g, [np.iinfo(np.int64).max]), i64(g, [0]))
    if reduction == "mean":
        count = g.Cast(g.Max(sizes, i64(g, [1])), to=acc_type)
        out = g.Div(out, g.Unsqueeze(count, i64(g, list(range(1, emb.rank)))) if emb.rank > 1 else count)
    return [g.Cast(out, to=emb.etype.onnx) if widen else out]


def _offsets(ctx, layer, inputs, reduction):
    emb, idx, offsets = inputs[:3]
    default = inputs[3] if len(inputs) > 3 else None
    weights = inputs[4] if len(inputs) > 4 else None
    _check_table(ctx, layer, emb, idx, offsets)
    if idx.rank != 1 or offsets.rank != 1:
        raise InvalidLayer(layer, f"indices and offsets must be 1-D, got ranks {idx.rank} and {offsets.rank}")
    if weights is not None and reduction == "mean":
        raise InvalidLayer(layer, "per_sample_weights are supported only with reduction 'sum'")
    g = ctx.b
    k, off = i64_indices(ctx, layer, idx), i64_indices(ctx, layer, offsets)
    n, batch = g.Shape(k), g.Shape(off)
    # bag(j) + 1 = how many offsets are <= j: ones added at each offset, then a running sum
    marks = g.ScatterElements(_ints(g, g.Add(n, i64(g, [1])), 0), off, _ints(g, batch, 1), axis=0, reduction="add")
    rows = g.Slice(g.CumSum(marks, i64(g, 0)), i64(g, [0]), n, i64(g, [0]))
    ends = g.Concat(g.Slice(off, i64(g, [1]), i64(g, [np.iinfo(np.int64).max]), i64(g, [0])), n, axis=0)
    sizes = g.Sub(ends, off)
    d = _scalar_index(ctx, layer, default, "default_index") if default is not None else None
    return _bags(ctx, layer, emb, k, rows, weights, batch, sizes, d, reduction)


@lowers("EmbeddingBagOffsetsSum", "opset3")
def embedding_bag_offsets_sum3(ctx, layer, inputs):
    """EmbeddingBagOffsetsSum-3 (emb_table, indices, offsets[, default_index[, per_sample_weights]])
    -> ScatterElements(add), CumSum (bag of each index), Gather, Mul, ScatterND(add), Slice."""
    return _offsets(ctx, layer, inputs, "sum")


@lowers("EmbeddingBagOffsets", "opset15")
def embedding_bag_offsets15(ctx, layer, inputs):
    """EmbeddingBagOffsets-15 (emb_table, indices, offsets[, default_index[, per_sample_weights]];
    reduction sum/mean) -> as EmbeddingBagOffsetsSum-3, then Div by the bag sizes for mean."""
    return _offsets(ctx, layer, inputs, layer.attrs["reduction"])


def _packed(ctx, layer, inputs, reduction):
    emb, idx = inputs[:2]
    weights = inputs[2] if len(inputs) > 2 else None
    _check_table(ctx, layer, emb, idx)
    if idx.rank != 2:
        raise InvalidLayer(layer, f"indices must be 2-D [batch, indices_per_bag], got rank {idx.rank}")
    if weights is not None and reduction == "mean":
        raise InvalidLayer(layer, "per_sample_weights are supported only with reduction 'sum'")
    g = ctx.b
    k = i64_indices(ctx, layer, idx)
    shape = g.Shape(k)
    batch, per_bag = g.Slice(shape, i64(g, [0]), i64(g, [1])), g.Slice(shape, i64(g, [1]), i64(g, [2]))
    rows = g.Add(g.Range(i64(g, 0), g.Squeeze(batch), i64(g, 1)), i64(g, [1]))
    rows = g.Reshape(g.Expand(g.Unsqueeze(rows, i64(g, [1])), shape), i64(g, [-1]))
    w = None
    if weights is not None:
        w = g.value(g.Reshape(weights, i64(g, [-1])), weights.etype, [None])
    sizes = g.Expand(per_bag, batch)
    return _bags(ctx, layer, emb, g.Reshape(k, i64(g, [-1])), rows, w, batch, sizes, None, reduction)


@lowers("EmbeddingBagPackedSum", "opset3")
def embedding_bag_packed_sum3(ctx, layer, inputs):
    """EmbeddingBagPackedSum-3 (emb_table, indices [batch, per_bag][, per_sample_weights]) ->
    Reshape, Gather, Mul, ScatterND(add) by row, Slice."""
    return _packed(ctx, layer, inputs, "sum")


@lowers("EmbeddingBagPacked", "opset15")
def embedding_bag_packed15(ctx, layer, inputs):
    """EmbeddingBagPacked-15 (emb_table, indices[, per_sample_weights]; reduction sum/mean) -> as
    EmbeddingBagPackedSum-3, then Div by indices_per_bag for mean."""
    return _packed(ctx, layer, inputs, layer.attrs["reduction"])


@lowers("EmbeddingSegmentsSum", "opset3")
def embedding_segments_sum3(ctx, layer, inputs):
    """EmbeddingSegmentsSum-3 (emb_table, indices, segment_ids, num_segments[, default_index[,
    per_sample_weights]]) -> Gather, Mul, ScatterND(add) at segment_ids + 1, Slice; the segment
    sizes (for default_index) by ScatterElements(add) of ones. A constant negative default_index
    is refused (the spec gives no meaning to it; OpenVINO's reference raises)."""
    emb, idx, seg, num = inputs[:4]
    default = inputs[4] if len(inputs) > 4 else None
    weights = inputs[5] if len(inputs) > 5 else None
    _check_table(ctx, layer, emb, idx, seg)
    if idx.rank != 1 or seg.rank != 1:
        raise InvalidLayer(layer, f"indices and segment_ids must be 1-D, got ranks {idx.rank} and {seg.rank}")
    if default is not None and default.is_const and int(np.asarray(default.value()).reshape(-1)[0]) < 0:
        raise InvalidLayer(layer, "default_index must be >= 0")
    g = ctx.b
    k, s = i64_indices(ctx, layer, idx), i64_indices(ctx, layer, seg)
    batch = _scalar_index(ctx, layer, num, "num_segments")
    sizes = None
    d = _scalar_index(ctx, layer, default, "default_index") if default is not None else None
    if d is not None:
        sizes = g.ScatterElements(_ints(g, batch, 0), s, _ints(g, g.Shape(s), 1), axis=0, reduction="add")
    return _bags(ctx, layer, emb, k, g.Add(s, i64(g, [1])), weights, batch, sizes, d, "sum", minus_one_is_zero=False)
