"""NMSRotated-13: greedy non-maximum suppression of rotated boxes.

ONNX has no rotated NMS; the lowering computes it:

- the IoU of every pair of boxes of a batch, [N, M, M] (:mod:`.nms_rotated_iou`: the candidate's
  corners in the other box's frame, clamped into it, shoelace area; in f64 from the f32 box
  values, rounded to f32); ``w * h`` not positive: IoU 0 (as OpenVINO's CPU plugin and reference);
- per batch and class the candidates (``score > score_threshold``) in descending score order,
  equal scores by the smaller box index (TopK, stable in onnxruntime);
- an ONNX Loop over the M sorted positions, carrying for all batches and classes at once the
  alive mask, the selected mask and the count per class: the candidate at position k is selected
  when alive and fewer than max_output_boxes_per_class are selected, and then it and every box
  with ``iou > iou_threshold`` are no longer alive (a negative threshold keeps one box per
  class); the Loop stops when no class has an alive box and room left;
- rows (batch, class, box) in (batch, class, selection) order: NonZero of the selected mask in
  sorted order, GatherND of the box indices; sort_result_descending=true orders all rows by
  descending score, equal scores keeping that order (TopK, stable); selected_scores gathers the
  scores; valid_outputs is the number of rows, which are not padded (OpenVINO's CPU plugin
  returns [K, 3] too).

All three thresholds may be run-time inputs; a negative max_output_boxes_per_class is refused
when constant and selects nothing at run time (OpenVINO's CPU plugin raises).

Tolerance: the selection is exact wherever no IoU lies within f32 rounding of iou_threshold. The
IoU here is the exact rotated IoU of the f32 inputs rounded to f32 (within 5e-8 of the float64
oracle); OpenVINO's CPU plugin computes it in f32 arithmetic, within 3e-7 of this on random
boxes of size 1-8 near the origin and within 1.8e-6 at pixel coordinates (centres 300-900, sizes
20-100; measured by bisecting the threshold at which it suppresses, tests/test_nms_rotated.py),
but far off where edges of the two boxes are collinear (it drops intersection corners lying on
the other box's edge: 0.185 for a true 5/11; docs/deviations.md).
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.element_types import element_type
from ..lowering.builder import Value
from ..lowering.registry import lowers
from ._common.indices import output_type
from ._common.shapes import i64
from ._nms_rotated_iou import rotated_iou

FLOATS = ("f32", "f16", "bf16")
F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _check(layer, boxes: Value, scores: Value) -> None:
    for v, what in ((boxes, "boxes"), (scores, "scores")):
        name = v.etype.name if v.etype else "?"
        if name not in FLOATS:
            raise UnsupportedLayer(layer, f"{what} of type {name} are not supported ({', '.join(FLOATS)})")
        if v.rank is None:
            raise UnsupportedLayer(layer, f"{what} need a known rank")
        if v.rank != 3:
            raise InvalidLayer(layer, f"{what} must be 3-D, got rank {v.rank}")
    b, s = boxes.shape, scores.shape
    if b[2] is not None and b[2] != 5:
        raise InvalidLayer(layer, f"boxes must be [num_batches, num_boxes, 5], got last dim {b[2]}")
    for i, j, what in ((0, 0, "num_batches"), (1, 2, "num_boxes")):
        if b[i] is not None and s[j] is not None and b[i] != s[j]:
            raise InvalidLayer(layer, f"boxes and scores disagree on {what}: {b[i]} vs {s[j]}")


def _scalar(g, layer, v: Value, what: str, integer: bool) -> str:
    """A threshold or count as a scalar (f32 or i64), constant or run-time."""
    name = v.etype.name if v.etype else "?"
    if integer != bool(v.etype and v.etype.is_integer) or (not integer and name not in FLOATS + ("f64",)):
        raise InvalidLayer(layer, f"{what} must be {'an integer' if integer else 'a float'}, got {name}")
    if v.shape is not None and None not in v.shape and int(np.prod(v.shape)) != 1:
        raise InvalidLayer(layer, f"{what} must hold one value, got shape {list(v.shape)}")
    if v.is_const:
        value = np.asarray(v.value()).reshape(-1)[0]
        if integer and int(value) < 0:
            raise InvalidLayer(layer, f"{what} {int(value)} is negative")
        return g.const(np.int64(value) if integer else np.float32(value), np.int64 if integer else np.float32, what)
    to = I64 if integer else F32
    cast = v.name if (name == ("i64" if integer else "f32")) else g.Cast(v, to=to)
    scalar = g.Reshape(cast, i64(g, []))
    return g.Max(scalar, i64(g, 0)) if integer else scalar


def _loop(g, order, iou, alive0, limit, iou_t):
    """The greedy pass: Loop over the sorted positions; returns the selected mask [N, C, M]."""
    steps = g.Squeeze(g.Slice(g.Shape(order), i64(g, [2]), i64(g, [3])), i64(g, [0]))
    positions = g.Range(i64(g, 0), steps, i64(g, 1))  # [M]
    saved, g.nodes = g.nodes, []
    it, cond_in = g.unique("nmsr/iter"), g.unique("nmsr/cond")
    alive, chosen, count = g.unique("nmsr/alive"), g.unique("nmsr/chosen"), g.unique("nmsr/count")
    idx = g.Unsqueeze(g.Gather(order, it, axis=2), i64(g, [2]))  # [N, C, 1] box index at position it
    take = g.And(g.GatherElements(alive, idx, axis=2), g.Less(count, limit))  # [N, C, 1]
    row = g.GatherND(iou, idx, batch_dims=1)  # [N, C, M]: IoU of every candidate with box idx
    here = g.Equal(positions, idx)  # [N, C, M]: the box at position it
    chosen_out = g.Or(chosen, g.And(here, take))
    alive_out = g.And(alive, g.Not(g.Or(here, g.And(take, g.Greater(row, iou_t)))))
    count_out = g.Add(count, g.Cast(take, to=I64))
    waiting = g.Cast(g.And(alive_out, g.Less(count_out, limit)), to=F32)  # any class with work left
    cond_out = g.Greater(g.ReduceMax(waiting, keepdims=0), g.const(np.float32(0), np.float32, "zero"))
    body_nodes, g.nodes = g.nodes, saved
    vi = helper.make_tensor_value_info
    masks = [None, None, None]
    body = helper.make_graph(body_nodes, g.unique("nmsr/body"),
                             [vi(it, I64, []), vi(cond_in, BOOL, []), vi(alive, BOOL, masks),
                              vi(chosen, BOOL, masks), vi(count, I64, [None, None, 1])],
                             [vi(cond_out, BOOL, []), vi(alive_out, BOOL, masks),
                              vi(chosen_out, BOOL, masks), vi(count_out, I64, [None, None, 1])])
    chosen0 = g.And(alive0, g.Not(alive0))  # all false
    count0 = g.ReduceSum(g.Cast(chosen0, to=I64), i64(g, [2]), keepdims=1)  # zeros [N, C, 1]
    go = g.const(np.array(True), np.bool_, "true")
    _, chosen_final, _ = g.Loop(steps, go, alive0, chosen0, count0, body=body, _outputs=3)
    return chosen_final


@lowers("NMSRotated", "opset13")
def nms_rotated13(ctx, layer, inputs):
    """NMSRotated-13 (boxes[N,M,5], scores[N,C,M], max_boxes, iou_threshold, score_threshold) ->
    Cast, rotated IoU matrix (Cast f64, Cos, Sin, Mul, Div, Clip, ReduceSum, Where), TopK
    (candidate order), Loop (greedy keep mask: Gather, GatherElements, GatherND, And, Greater),
    GatherElements, NonZero, GatherND, Concat (sorted: TopK, Gather), Shape."""
    if len(inputs) != 5:
        raise InvalidLayer(layer, f"NMSRotated takes 5 inputs, got {len(inputs)}")
    boxes, scores, max_boxes, iou_v, score_v = inputs
    _check(layer, boxes, scores)
    itype = output_type(layer)
    g = ctx.b
    limit = _scalar(g, layer, max_boxes, "max_output_boxes_per_class", True)
    iou_t = _scalar(g, layer, iou_v, "iou_threshold", False)
    score_t = _scalar(g, layer, score_v, "score_threshold", False)
    bx = boxes.name if boxes.etype.name == "f32" else g.Cast(boxes, to=F32)
    sc = scores.name if scores.etype.name == "f32" else g.Cast(scores, to=F32)
    iou = rotated_iou(g, bx, bool(layer.attrs["clockwise"]))
    m = g.Slice(g.Shape(sc), i64(g, [2]), i64(g, [3]))
    _, order = g.TopK(sc, m, axis=2, largest=1, sorted=1, _outputs=2)  # [N, C, M] box indices
    alive0 = g.Greater(sc, score_t)  # in box order
    chosen = _loop(g, order, iou, alive0, limit, iou_t)
    ranked = g.GatherElements(chosen, order, axis=2)  # selected mask in sorted order
    where = g.Transpose(g.NonZero(ranked), perm=[1, 0])  # [K, 3]: batch, class, position
    bc = g.Slice(where, i64(g, [0]), i64(g, [2]), i64(g, [1]))
    box = g.Unsqueeze(g.GatherND(order, where), i64(g, [1]))  # [K, 1]
    selected = g.Concat(bc, box, axis=1)
    picked = g.GatherND(sc, selected)  # [K]
    if layer.attrs["sort_result_descending"]:
        picked, rank = g.TopK(picked, g.Shape(picked), axis=0, largest=1, sorted=1, _outputs=2)
        selected = g.Gather(selected, rank, axis=0)
    out_float = layer.outputs[1].etype or scores.etype
    if out_float.name not in FLOATS:
        raise InvalidLayer(layer, f"selected_scores must be of a float type, got {out_float.name}")
    columns = g.Cast(g.Slice(selected, i64(g, [0]), i64(g, [2]), i64(g, [1])), to=F32)
    rows = g.Concat(columns, g.Unsqueeze(picked, i64(g, [1])), axis=1)
    if out_float.name != "f32":
        rows = g.Cast(rows, to=out_float.onnx)
    valid = g.Slice(g.Shape(selected), i64(g, [0]), i64(g, [1]), i64(g, [0]))
    if itype == "i32":
        selected, valid = g.Cast(selected, to=TensorProto.INT32), g.Cast(valid, to=TensorProto.INT32)
    it = element_type(itype)
    return [Value(g, it, (None, 3), name=selected), Value(g, out_float, (None, 3), name=rows),
            Value(g, it, (1,), name=valid)]
