"""NonMaxSuppression-1/-3/-4/-5/-9: detection post-processing.

NonMaxSuppression maps to ONNX NonMaxSuppression, which runs the same greedy algorithm per batch
and class (candidates by descending score, equal scores by the smaller box index, corners given
in any order, ``center_point_box=1`` for box_encoding=center). Where the two differ:

- the spec text keeps a box whose score is *equal* to score_threshold (step 6: ``s >= t``);
  ir2onnx keeps ``score > score_threshold`` like ONNX (onnxruntime), OpenVINO's runtime and the
  ONNX frontend that writes this layer from ONNX NonMaxSuppression (measured round trip: a score
  equal to the threshold is dropped by the source ONNX model). The threshold must be a constant.
  An absent score_threshold is the spec's 0, not ONNX's "no threshold".
- the spec suppresses a box when ``iou > iou_threshold`` (``func(iou) = 1 if iou <= iou_threshold``),
  as ONNX does; ONNX never suppresses boxes that do not intersect, which the spec only does for a
  negative threshold: refused.
- selected_scores ([batch, class, score] rows) has no ONNX output: GatherND of the scores at the
  selected indices, Concat with the batch and class columns cast to the float type.
- sort_result_descending=true sorts the selected rows of all batches by descending score; equal
  scores keep ONNX's (batch, class, box) order: TopK over the scores (onnxruntime's TopK orders
  ties by the smaller index, a stable sort) and Gather of the rows.
- valid_outputs is the number of rows; the rows are not padded with -1 (OpenVINO's CPU plugin does
  not pad either, for -5 nor -9).
- Soft-NMS (soft_nms_sigma != 0) has no ONNX counterpart: refused, as is a sigma known only at
  run time (it may be non-zero).
- thresholds known only at run time: the IoU threshold is clipped to [0, 1] (onnxruntime rejects
  others; above 1 nothing is suppressed either way) and a negative one keeps one box per class
  (max_output_boxes_per_class min 1), as the spec's negative threshold suppresses every other
  box; scores not above a run-time score threshold become NaN (Where), which ONNX's
  ``score > -FLT_MAX`` drops, and selected_scores are gathered from the original scores.

OpenVINO 2026.4's CPU plugin suppresses at ``iou >= iou_threshold`` (measured; so with
iou_threshold 0 it keeps one box per class, except zero-area boxes), where the spec and the source
ONNX model suppress at ``iou > iou_threshold``: ir2onnx follows the ONNX model.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from onnx import TensorProto

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.element_types import element_type
from ..lowering.builder import Value
from ..lowering.registry import lowers
from ._common.indices import output_type
from ._common.shapes import i64

FLOATS = ("f32", "f16", "bf16")


def _scalar(layer, v: Value | None, what: str, default: float) -> float:
    """The single value of a constant scalar / 1-element input (``default`` when absent)."""
    if v is None:
        return default
    if not v.is_const:
        raise UnsupportedLayer(layer, f"{what} known only at run time is not supported (it is folded "
                                      "into the ONNX node's threshold at convert time)")
    values = np.asarray(v.value()).reshape(-1)
    if values.size != 1:
        raise InvalidLayer(layer, f"{what} must hold one value, got {values.size}")
    return values[0]


def _one_value(layer, v: Value, what: str) -> Value:
    """A run-time threshold: one float value."""
    if v.etype is None or v.etype.name not in FLOATS + ("f64",):
        raise InvalidLayer(layer, f"{what} must be a float, got {v.etype.name if v.etype else '?'}")
    if v.shape is not None and None not in v.shape and int(np.prod(v.shape)) != 1:
        raise InvalidLayer(layer, f"{what} must hold one value, got shape {list(v.shape)}")
    return v


def _f32(g, v: Value) -> str:
    return v.name if v.etype.name == "f32" else g.Cast(v, to=TensorProto.FLOAT)


def _check_inputs(layer, boxes: Value, scores: Value) -> None:
    for v, what in ((boxes, "boxes"), (scores, "scores")):
        name = v.etype.name if v.etype else "?"
        if name not in FLOATS:
            raise UnsupportedLayer(layer, f"{what} of type {name} are not supported ({', '.join(FLOATS)}; "
                                          "onnxruntime's NonMaxSuppression computes in f32)")
        if v.rank is not None and v.rank != 3:
            raise InvalidLayer(layer, f"{what} must be 3-D, got rank {v.rank}")
    if boxes.rank is None or scores.rank is None:
        raise UnsupportedLayer(layer, "boxes and scores need a known rank")
    b, s = boxes.shape, scores.shape
    if b[2] is not None and b[2] != 4:
        raise InvalidLayer(layer, f"boxes must be [num_batches, num_boxes, 4], got last dim {b[2]}")
    for i, j, what in ((0, 0, "num_batches"), (1, 2, "num_boxes")):
        if b[i] is not None and s[j] is not None and b[i] != s[j]:
            raise InvalidLayer(layer, f"boxes and scores disagree on {what}: {b[i]} vs {s[j]}")


@lowers("NonMaxSuppression", "opset5")
def nms5(ctx, layer, inputs):
    """NonMaxSuppression-5 (boxes, scores[, max_boxes, iou, score_threshold, sigma]) -> Cast,
    NonMaxSuppression, GatherND, Concat (sorted: TopK, Gather), Shape."""
    return nms(ctx, layer, inputs)


@lowers("NonMaxSuppression", "opset9")
def nms9(ctx, layer, inputs):
    """NonMaxSuppression-9 (boxes, scores[, max_boxes, iou, score_threshold, sigma]) -> Cast,
    NonMaxSuppression, GatherND, Concat (sorted: TopK, Gather), Shape."""
    return nms(ctx, layer, inputs)


@lowers("NonMaxSuppression", "opset1")
@lowers("NonMaxSuppression", "opset3")
@lowers("NonMaxSuppression", "opset4")
def nms_indices_only(ctx, layer, inputs):
    """NonMaxSuppression-1/-3/-4 (boxes, scores[, max_boxes, iou, score_threshold]) -> Cast,
    NonMaxSuppression (sorted: GatherND, TopK, Gather)[, Pad]: selected_indices only, as -5
    computes them, then padded with rows of -1 to the static row count the IR declares
    (min(num_boxes, max_output_boxes_per_class) * num_batches * num_classes) where the IR declares
    that count, as the spec says and as Model Optimizer's models rely on (face-detection-0105
    reshapes and TopKs 200 rows). Otherwise (dynamic boxes, run-time max boxes, or another declared
    count, as OpenVINO 2026 writes) the rows are not padded, as OpenVINO's CPU plugin gives them
    where they are a model output (measured with 2026.4).
    NonMaxSuppression-1 has no output_type: i64."""
    if len(inputs) > 5:
        raise InvalidLayer(layer, f"{len(inputs)} inputs: NonMaxSuppression-{layer.version[5:]} takes at most 5")
    attrs = dict(layer.attrs)
    attrs.setdefault("output_type", "i64")
    selected = nms(ctx, dataclasses.replace(layer, attrs=attrs), inputs)[0]
    rows = _spec_rows(inputs)
    if rows is None or not layer.outputs[0].shape or layer.outputs[0].shape[0] != rows:
        return [selected]
    g = ctx.b
    short = g.Sub(i64(g, [rows]), g.Shape(selected, start=0, end=1) if ctx.opset >= 15 else
                  g.Slice(g.Shape(selected), i64(g, [0]), i64(g, [1]), i64(g, [0])))
    pads = g.Concat(i64(g, [0, 0]), short, i64(g, [0]), axis=0)
    minus_one = g.const(np.array(-1, selected.etype.numpy), selected.etype.numpy, "minus_one")
    return [Value(g, selected.etype, (rows, 3), name=g.Pad(selected, pads, minus_one))]


def _spec_rows(inputs) -> int | None:
    """min(num_boxes, max_output_boxes_per_class) * num_batches * num_classes, where all are known."""
    boxes, scores = inputs[0], inputs[1]
    limit = inputs[2] if len(inputs) > 2 else None
    if limit is None or not limit.is_const or boxes.shape is None or scores.shape is None:
        return None
    b, n, c = boxes.shape[0], boxes.shape[1], scores.shape[1]
    if None in (b, n, c):
        return None
    return min(n, int(np.asarray(limit.value()).reshape(-1)[0])) * b * c


def nms(ctx, layer, inputs):
    """The shared lowering of NonMaxSuppression-1/-3/-4/-5/-9 (see the module docstring); a layer
    with one output port gets selected_indices alone."""
    inputs = list(inputs) + [None] * (6 - len(inputs))
    boxes, scores, max_boxes, iou_v, score_v, sigma_v = inputs
    _check_inputs(layer, boxes, scores)
    itype = output_type(layer)
    if sigma_v is not None and not sigma_v.is_const:
        raise UnsupportedLayer(layer, "soft_nms_sigma known only at run time: it may be non-zero, and Soft-NMS "
                                      "has no ONNX counterpart")
    sigma = float(_scalar(layer, sigma_v, "soft_nms_sigma", 0.0))
    if sigma != 0.0:
        raise UnsupportedLayer(layer, f"Soft-NMS (soft_nms_sigma={sigma:g}) has no ONNX counterpart")
    g = ctx.b
    f32 = TensorProto.FLOAT
    run_time_iou = iou_v is not None and not iou_v.is_const
    if not run_time_iou:
        iou = np.float32(_scalar(layer, iou_v, "iou_threshold", 0.0))
        if not iou >= 0:
            raise UnsupportedLayer(layer, f"iou_threshold {iou:g} (negative or NaN) suppresses boxes that do not "
                                          "overlap; ONNX's NonMaxSuppression never does")
        iou_name = g.const([min(iou, np.float32(1))], np.float32, "iou_threshold")
    else:
        iou_name = g.Reshape(_f32(g, _one_value(layer, iou_v, "iou_threshold")), i64(g, [1]))
    bx = boxes if boxes.etype.name == "f32" else g.Cast(boxes, to=f32)
    sc = scores if scores.etype.name == "f32" else g.Cast(scores, to=f32)
    sc_nms = sc
    if score_v is not None and not score_v.is_const:  # s > threshold kept (as onnxruntime); the rest NaN
        thr = _f32(g, _one_value(layer, score_v, "score_threshold"))
        sc_nms = g.Where(g.Greater(sc, g.Reshape(thr, i64(g, []))), sc, g.const(np.float32(np.nan), np.float32, "nan"))
        score_gt = np.float32(np.finfo(np.float32).min)
    else:
        score = np.float32(_scalar(layer, score_v, "score_threshold", 0.0))
        if np.isnan(score):
            raise InvalidLayer(layer, "score_threshold is NaN")
        score_gt = score  # ONNX keeps s > score_threshold, as onnxruntime runs the source ONNX model
    if max_boxes is None:
        count = i64(g, [0], "max_boxes")
    elif max_boxes.is_const:
        values = np.asarray(max_boxes.value()).reshape(-1)
        if values.size != 1 or not max_boxes.etype.is_integer:
            raise InvalidLayer(layer, f"max_output_boxes_per_class must be one integer, got {values}")
        if int(values[0]) < 0:
            raise InvalidLayer(layer, f"max_output_boxes_per_class {int(values[0])} is negative")
        count = i64(g, [int(values[0])], "max_boxes")
    else:
        if not max_boxes.etype.is_integer:
            raise InvalidLayer(layer, f"max_output_boxes_per_class must be an integer, got {max_boxes.etype.name}")
        mb = max_boxes.name if max_boxes.etype.name == "i64" else g.Cast(max_boxes, to=TensorProto.INT64)
        count = g.Reshape(mb, i64(g, [1], "one"))
    if run_time_iou:  # a negative threshold suppresses every other box: one per class
        negative = g.Less(iou_name, g.const([0], np.float32, "zero"))
        count = g.Where(negative, g.Min(count, i64(g, [1], "one")), count)
        iou_name = g.Clip(iou_name, g.const(np.float32(0), np.float32, "zero"), g.const(np.float32(1), np.float32, "one"))
    selected = g.NonMaxSuppression(bx, sc_nms, count, iou_name,
                                   g.const([score_gt], np.float32, "score_threshold"),
                                   center_point_box=int(layer.attrs["box_encoding"] == "center"))
    picked = g.GatherND(sc, selected)  # [M] f32 scores of the selected boxes
    if layer.attrs["sort_result_descending"]:
        picked, order = g.TopK(picked, g.Shape(picked), axis=0, largest=1, sorted=1, _outputs=2)
        selected = g.Gather(selected, order, axis=0)
    if len(layer.outputs) == 1:
        if itype == "i32":
            selected = g.Cast(selected, to=TensorProto.INT32)
        return [Value(g, element_type(itype), (None, 3), name=selected)]
    out_float = layer.outputs[1].etype or scores.etype
    if out_float.name not in FLOATS:
        raise InvalidLayer(layer, f"selected_scores must be of a float type, got {out_float.name}")
    columns = g.Cast(g.Slice(selected, i64(g, [0]), i64(g, [2]), i64(g, [1])), to=f32)
    rows = g.Concat(columns, g.Unsqueeze(picked, i64(g, [1], "axis")), axis=1)
    if out_float.name != "f32":
        rows = g.Cast(rows, to=out_float.onnx)
    valid = g.Shape(selected, start=0, end=1) if ctx.opset >= 15 else \
        g.Slice(g.Shape(selected), i64(g, [0]), i64(g, [1]), i64(g, [0]))
    if itype == "i32":
        selected, valid = g.Cast(selected, to=TensorProto.INT32), g.Cast(valid, to=TensorProto.INT32)
    it = element_type(itype)
    return [Value(g, it, (None, 3), name=selected), Value(g, out_float, (None, 3), name=rows),
            Value(g, it, (1,), name=valid)]
