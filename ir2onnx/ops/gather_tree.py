"""GatherTree-1 -> Scan (backwards in time) of GatherElements, Where; then CumSum, Where.

The spec's loop, for every batch and beam at once: a beam index ``cur`` starts at the beam itself
and walks back in time; at a step t inside the sequence (``t < min(MAX_TIME, max_seq_len[b])``)
the output is ``step_ids[t, b, cur]`` and ``cur`` becomes ``parent_ids[t, b, cur]``; outside it
the output is ``end_token`` and ``cur`` stays. Afterwards every step after the first
``end_token`` inside the sequence becomes ``end_token`` (an exclusive CumSum of the end marks).
The Scan runs over MAX_TIME as it comes at run time; the values are moved, never computed (types
that onnxruntime's Where lacks go through int64: the spec allows integer values only).
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.indices import known_ranks
from ._common.shapes import i64

_INT64, _BOOL = TensorProto.INT64, TensorProto.BOOL
_WHERE_TYPES = ("f32", "f16", "f64", "i8", "u8", "i32", "u32", "i64")


def _body(g, layer, elem: int):
    """The Scan body: states (cur int64 [B, W], end [1, 1]), scan inputs (step ids [B, W],
    parents [B, W], active bool [B, 1]) -> states, one output row [B, W]."""
    n = lambda hint: g.unique(f"{layer.name}/gather_tree/{hint}")  # noqa: E731
    cur, end, steps, parents, active = n("cur"), n("end"), n("steps"), n("parents"), n("active")
    picked, parent, parent64, row, new_cur, end_out = (n(h) for h in ("picked", "parent", "parent64", "row",
                                                                       "new_cur", "end_out"))
    nodes = [
        helper.make_node("GatherElements", [steps, cur], [picked], axis=1),
        helper.make_node("GatherElements", [parents, cur], [parent], axis=1),
        helper.make_node("Cast", [parent], [parent64], to=_INT64),
        helper.make_node("Where", [active, picked, end], [row]),
        helper.make_node("Where", [active, parent64, cur], [new_cur]),
        helper.make_node("Identity", [end], [end_out]),
    ]
    info = helper.make_tensor_value_info
    inputs = [info(cur, _INT64, None), info(end, elem, None), info(steps, elem, None), info(parents, elem, None),
              info(active, _BOOL, None)]
    outputs = [info(new_cur, _INT64, None), info(end_out, elem, None), info(row, elem, None)]
    return helper.make_graph(nodes, g.unique(f"{layer.name}/gather_tree_body"), inputs, outputs)


@lowers("GatherTree", "opset1")
def gather_tree1(ctx, layer, inputs):
    """GatherTree-1 (step_ids, parent_ids, max_seq_len, end_token) -> Scan(reverse) of
    GatherElements, Where; CumSum(exclusive), Where."""
    steps, parents, lengths, end = inputs
    known_ranks(layer, steps, parents, lengths)
    if steps.rank != 3 or parents.rank != 3 or lengths.rank != 1:
        raise InvalidLayer(layer, f"step_ids and parent_ids must be 3-D and max_seq_len 1-D, got ranks "
                                  f"{steps.rank}, {parents.rank}, {lengths.rank}")
    if len({v.etype for v in inputs}) != 1:
        raise InvalidLayer(layer, "all inputs must have one element type")
    et = steps.etype.name
    ctx.onnx_type(layer, steps.etype)
    if et == "boolean" or (steps.etype.numpy is None and et != "bf16"):
        raise UnsupportedLayer(layer, f"element type {et} is not numeric")
    g = ctx.b
    wide = et not in _WHERE_TYPES
    elem = _INT64 if wide else steps.etype.onnx
    s, p, e = ((g.Cast(v, to=_INT64) if wide else v.name) for v in (steps, parents, end))
    shape = g.Shape(steps)
    time, batch = g.Slice(shape, i64(g, [0]), i64(g, [1])), g.Slice(shape, i64(g, [1]), i64(g, [2]))
    length = g.Cast(lengths, to=_INT64)
    t = g.Range(i64(g, 0), g.Squeeze(time), i64(g, 1))
    active = g.Less(g.Unsqueeze(t, i64(g, [1])), g.Unsqueeze(length, i64(g, [0])))  # [T, B]
    active3 = g.Unsqueeze(active, i64(g, [2]))  # [T, B, 1]
    beams = g.Range(i64(g, 0), g.Squeeze(g.Slice(shape, i64(g, [2]), i64(g, [3]))), i64(g, 1))
    cur0 = g.Expand(g.Unsqueeze(beams, i64(g, [0])), g.Concat(batch, i64(g, [1]), axis=0))
    end2 = g.Reshape(e, i64(g, [1, 1]))
    _, _, final = g.op("Scan", cur0, end2, s, p, active3, _outputs=3, body=_body(g, layer, elem), num_scan_inputs=3,
                       scan_input_directions=[1, 1, 1], scan_output_directions=[1])
    is_end = g.Cast(g.And(g.Equal(final, end2), active3), to=TensorProto.INT32)
    after_end = g.Greater(g.CumSum(is_end, i64(g, 0), exclusive=1), g.const([0], np.int32))
    out = g.Where(after_end, end2, final)
    return [g.Cast(out, to=steps.etype.onnx) if wide else out]
