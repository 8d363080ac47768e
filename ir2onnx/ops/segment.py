"""SegmentMax-16 -> ScatterND(reduction max) into a buffer with one extra row.

Row ``segment_ids[i] + 1`` of a ``[num_segments + 1, ...]`` buffer takes the maximum of the data
rows of segment i; ids at or past ``num_segments`` go to row 0, which is dropped (OpenVINO's
reference stops at the first such id; the ids are sorted). The spec does not say how NaN and -inf
count: OpenVINO's reference (and its CPU plugin, measured) starts every segment at the type's
lowest value and takes ``max(acc, x)`` as ``acc < x ? x : acc``, so NaN is skipped and -inf gives
the lowest value; ir2onnx does the same (NaN replaced by the lowest value before the max). An
empty segment gets 0 (``fill_mode="zero"``) or the lowest value: the buffer is filled with the
fill value and the rows of non-empty segments are first set to the lowest value.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.indices import i64_indices, known_ranks
from ._common.shapes import dims_of, i64

_LOWEST_BF16 = -float(np.float32(3.3895313892515355e38))  # -(2 - 2**-7) * 2**127


def _lowest(name: str, dtype) -> float | int:
    if name == "bf16":
        return _LOWEST_BF16
    dtype = np.dtype(dtype)
    return int(np.iinfo(dtype).min) if dtype.kind in "iu" else float(np.finfo(dtype).min)


@lowers("SegmentMax", "opset16")
def segment_max16(ctx, layer, inputs):
    """SegmentMax-16 (data, segment_ids[, num_segments]; fill_mode zero/lowest) -> ConstantOfShape
    (the fill), ScatterND (lowest at the non-empty rows), Where(IsNaN) for floats, ScatterND(max)
    (opset 18), Slice; without num_segments, ReduceMax(segment_ids) + 1 rows. f16/bf16 in f32."""
    data, seg = inputs[:2]
    num = inputs[2] if len(inputs) > 2 else None
    known_ranks(layer, data, seg)
    ctx.onnx_type(layer, data.etype)
    et = data.etype.name
    if et == "boolean" or (data.etype.numpy is None and et != "bf16"):
        raise UnsupportedLayer(layer, f"data of type {et} is not numeric")
    if data.rank < 1 or seg.rank != 1:
        raise InvalidLayer(layer, f"data must have rank >= 1 and segment_ids rank 1, got {data.rank} and {seg.rank}")
    ctx.require_opset(layer, 18, "SegmentMax (ScatterND with reduction max)")
    g = ctx.b
    widen = et in ("f16", "bf16")
    acc_type = TensorProto.FLOAT if widen else data.etype.onnx
    acc_np = np.float32 if widen else np.dtype(data.etype.numpy)
    lowest = _lowest(et, np.float16 if et == "f16" else acc_np)
    s = i64_indices(ctx, layer, seg)
    if num is not None:
        if num.shape is not None and int(np.prod([d for d in num.shape if d is not None])) > 1:
            raise InvalidLayer(layer, f"num_segments must be a scalar, got shape {num.shape}")
        count = g.Reshape(i64_indices(ctx, layer, num), i64(g, [1]))
    else:
        count = g.Add(g.ReduceMax(s, keepdims=1), i64(g, [1]))
    rows = g.Unsqueeze(g.Where(g.Less(s, count), g.Add(s, i64(g, [1])), i64(g, [0])), i64(g, [1]))
    x = g.Cast(data, to=acc_type) if widen else data.name
    low = g.const([lowest], acc_np)
    if np.dtype(acc_np).kind == "f":
        x = g.Where(g.IsNaN(x), low, x)
    tail = dims_of(g, data, 1) if data.rank > 1 else None
    rows_total = g.Add(count, i64(g, [1]))
    fill = 0 if layer.attrs["fill_mode"] == "zero" else lowest
    value = helper.make_tensor("fill", acc_type, [1], np.array([fill], acc_np).tobytes(), raw=True)
    buf = g.ConstantOfShape(g.Concat(rows_total, tail, axis=0) if tail else rows_total, value=value)
    if fill != lowest:
        buf = g.ScatterND(buf, rows, g.Expand(low, g.Shape(x)))
    out = g.ScatterND(buf, rows, x, reduction="max")
    out = g.Slice(out, i64(g, [1]), i64(g, [np.iinfo(np.int64).max]), i64(g, [0]))
    return [g.Cast(out, to=data.etype.onnx) if widen else out]
