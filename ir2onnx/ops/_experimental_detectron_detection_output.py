"""The chain of ExperimentalDetectronDetectionOutput-6 (the Detectron box head's detections of one
image), registered in ops/experimental_detectron.py (its family).

Facts (OpenVINO's CPU plugin, the one users run, and its reference implementation; measured with
2026.4), in our words:

- Inputs: rois ``[N, 4]``, deltas ``[N, 4 * C]``, scores ``[N, C]``, im_info ``[1, 3]``;
  C = num_classes, class 0 the background (never reported).
- A roi with ``x1 - x0 <= 0`` or ``y1 - y0 <= 0`` is skipped: for every class its box, area and
  score are 0. Otherwise, per class c >= 1, float32, offset 1: ``ww = x1 - x0 + 1``, ``cx = x0 +
  0.5 * ww``, ``dx = delta / weight`` (one division per delta), ``pcx = dx * ww + cx``, ``pw =
  exp(min(dlog w, max_delta_log_wh)) * ww``; ``x0' = max(0, pcx - 0.5 * pw)``, ``x1' = max(0, (pcx +
  0.5 * pw) - 1)`` (y likewise); area ``(x1' - x0' + 1) * (y1' - y0' + 1)``.
- Not done although the specification says so: clipping to im_info's height and width (im_info is
  not read) and class_agnostic_box_regression (the class's own deltas are used either way).
- Per class: candidates ``score > score_threshold``, ordered by score, highest first, equal scores
  smaller roi first; greedy NMS in that order: a candidate is dropped when its overlap with a kept
  box is ``> nms_threshold``. Overlap: 0 when the boxes are apart (``xmin2 > xmax1`` or ``xmax2 <
  xmin1``, y likewise) or the intersection's ``min - max + 1`` width or height is <= 0; else
  ``inter / (area1 + area2 - inter)`` with those +1 sizes (a NaN overlap, as for boxes at +inf,
  drops nothing). The first post_nms_count kept stay (-1: all).
- If at most max_detections_per_image stay over all classes, they are written class by class in
  NMS order; otherwise the max_detections_per_image highest scores, equal scores smaller roi first
  (equal roi too: smaller class first here; OpenVINO's partial sort leaves that order open).
  Rows past them: zeros (class 0, score 0).

ONNX NonMaxSuppression has no +1 and no early "apart" test, so the NMS here is the shared greedy
Loop of ``ops/_common/greedy_nms.py`` (the RPN ops' ``nms_cpu``) with the classes as its images over
the sorted candidates (as many steps as the most candidates of a class; a class's positions past
its candidates are never kept nor suppress), offset 1, the areas above (0 for skipped rois) and
``empty_is_apart`` (the side <= 0 test above, which ``nms_cpu`` lacks); post_nms_count is its cap,
which stops the Loop once every class has that many (measured, one core, 81 classes x 1000 rois,
about 950 candidates a class: 0.5 s, 0.07 s with post_nms_count 100; 0.7 s with the Loop this
module had before).
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..errors import InvalidLayer, UnsupportedLayer
from ._common.greedy_nms import greedy_nms
from ._common.shapes import dims_of, i64

_NAMES = ("input_rois", "input_deltas", "input_scores", "input_im_info")


def _check(layer, inputs, classes):
    for v, name, cols in zip(inputs, _NAMES, (4, 4 * classes, classes, 3)):
        if v.etype is None or v.etype.name != "f32":
            raise UnsupportedLayer(layer, f"{name} of type {getattr(v.etype, 'name', '?')}: only f32 is supported")
        if v.shape is not None and (len(v.shape) != 2 or v.shape[1] not in (None, cols)):
            raise InvalidLayer(layer, f"{name} must be [N, {cols}], got {list(v.shape)}")


def _at_least_zero(g, v, zero):
    """The plugin's ``std::max(0.f, v)``: v where 0 < v, else 0 (NaN too; ONNX Max keeps NaN)."""
    return g.Where(g.Less(zero, v), v, zero)


def detection_output_chain(ctx, layer, inputs):
    """ExperimentalDetectronDetectionOutput-6 (rois, deltas, scores, im_info) -> Reshape/Slice/Div
    (deltas per class), Sub/Add/Mul/Min/Exp/Max (decoding), Where (empty rois), TopK (per-class
    order), Loop (greedy NMS with +1 overlaps), CumSum (post_nms_count), NonZero | TopK (the
    max_detections_per_image rows), GatherND, Where, Pad."""
    a = layer.attrs
    C, post, D = int(a["num_classes"]), int(a["post_nms_count"]), int(a["max_detections_per_image"])
    if C < 2:
        raise UnsupportedLayer(layer, f"num_classes={C}: no class but the background")
    if D <= 0 or post < -1:
        raise InvalidLayer(layer, f"max_detections_per_image {D} must be positive, post_nms_count {post} >= -1")
    weights = [float(w) for w in a["deltas_weights"]]
    if len(weights) != 4:
        raise InvalidLayer(layer, f"deltas_weights must hold 4 values, got {weights}")
    _check(layer, inputs, C)
    rois, deltas, scores = inputs[:3]
    g = ctx.b
    f32 = lambda v: g.const(np.float32(v), np.float32)  # noqa: E731
    K = C - 1
    col = lambda t, j: g.Gather(t, i64(g, j), axis=1)  # noqa: E731
    x0, y0, x1, y1 = (g.Unsqueeze(col(rois, j), i64(g, [0])) for j in range(4))  # [1, N]
    dw, dh = g.Sub(x1, x0), g.Sub(y1, y0)
    valid = g.Not(g.Or(g.LessOrEqual(dw, f32(0)), g.LessOrEqual(dh, f32(0))))  # [1, N]
    d = g.Slice(g.Reshape(deltas, i64(g, [-1, C, 4])), i64(g, [1]), i64(g, [C]), i64(g, [1]))  # [N, K, 4]
    d = g.Div(g.Transpose(d, perm=[1, 0, 2]), g.const(np.float32(weights), np.float32))  # [K, N, 4]
    max_log = f32(np.float32(a["max_delta_log_wh"]))
    corners, sizes = [], []
    for p0, size, j in ((x0, dw, 0), (y0, dh, 1)):
        ww = g.Add(size, f32(1))
        pc = g.Add(g.Mul(g.Gather(d, i64(g, j), axis=2), ww), g.Add(p0, g.Mul(f32(0.5), ww)))
        half = g.Mul(f32(0.5), g.Mul(g.Exp(g.Min(g.Gather(d, i64(g, j + 2), axis=2), max_log)), ww))
        lo = _at_least_zero(g, g.Sub(pc, half), f32(0))
        hi = _at_least_zero(g, g.Sub(g.Add(pc, half), f32(1)), f32(0))
        corners.append((lo, hi))
        sizes.append(g.Add(g.Sub(hi, lo), f32(1)))
    zero = f32(0)
    (bx0, bx1), (by0, by1) = ((g.Where(valid, c, zero) for c in pair) for pair in corners)
    area = g.Where(valid, g.Mul(sizes[0], sizes[1]), zero)  # [K, N]
    score = g.Where(valid, g.Transpose(g.Slice(scores, i64(g, [1]), i64(g, [C]), i64(g, [1])), perm=[1, 0]), zero)
    cand = g.Greater(score, f32(np.float32(a["score_threshold"])))
    n = dims_of(g, rois, 0, 1)  # [1]
    _, order = g.op("TopK", g.Where(cand, score, f32(-np.inf)), n, axis=1, largest=1, sorted=1, _outputs=2)
    # Only the first T sorted positions can be kept, T the most candidates of any class.
    t = g.ReduceMax(g.ReduceSum(g.Cast(cand, to=TensorProto.INT64), i64(g, [1]), keepdims=0), keepdims=1)
    order = g.Slice(order, i64(g, [0]), t, i64(g, [1]))  # [K, T]
    srt = [g.Unsqueeze(g.GatherElements(v, order, axis=1), i64(g, [2])) for v in (bx0, by0, bx1, by1)]
    cap = f32(post) if 0 <= post < 2 ** 24 else None  # exact in f32; lets the Loop stop early
    kept = greedy_nms(g, layer.name, g.Concat(*srt, axis=2), g.Cast(g.GatherElements(cand, order, axis=1),
                      to=TensorProto.FLOAT), t, f32(1), f32(np.float32(a["nms_threshold"])), cap,
                      area=g.GatherElements(area, order, axis=1), empty_is_apart=True)  # [K, T]
    keep = g.Greater(kept, zero)
    if post >= 2 ** 24:  # more than a class can keep in practice; exact all the same
        rank = g.CumSum(g.Cast(keep, to=TensorProto.INT64), i64(g, 1))
        keep = g.And(keep, g.LessOrEqual(rank, i64(g, post)))
    boxes = g.Concat(*[g.Unsqueeze(t, i64(g, [2])) for t in (bx0, by0, bx1, by1)], axis=2)  # [K, N, 4]
    return _select(g, keep, order, boxes, score, t, K, D)


def _select(g, keep, order, boxes, score, n, K, D):
    """keep and order [K, n], boxes [K, N, 4], score [K, N] -> the output rows: the (class, roi)
    pairs kept, class by class when at most D, else the D highest scores (roi-major flat order
    breaks ties); gathered, padded with zeros."""
    total = g.ReduceSum(g.Cast(keep, to=TensorProto.INT64), i64(g, [0, 1]), keepdims=0)
    # At most D: the kept positions class by class (NonZero keeps that order).
    flat = g.Squeeze(g.NonZero(g.Reshape(keep, i64(g, [-1]))), i64(g, [0]))  # [T]
    flat = g.Slice(flat, i64(g, [0]), i64(g, [D]))
    cls_a = g.Div(flat, g.Max(n, i64(g, [1])))  # n = 0: flat is empty, but ONNX Div checks the divisor
    roi_a = g.Gather(g.Reshape(order, i64(g, [-1])), flat, axis=0)
    # More than D: TopK over the kept scores laid out [N, K] (ties: smaller roi, then class).
    none = g.Expand(g.const(np.float32(0), np.float32), g.Shape(score))  # zeros [K, N]
    kept_orig = g.ScatterElements(none, order, g.Cast(keep, to=TensorProto.FLOAT), axis=1)  # roi order
    masked = g.Where(g.Greater(kept_orig, g.const(np.float32(0), np.float32)), score,
                     g.const(np.float32(-np.inf), np.float32))
    masked = g.Reshape(g.Transpose(masked, perm=[1, 0]), i64(g, [-1]))  # [N * K]
    k = g.Min(g.Shape(masked), i64(g, [D]))
    _, q = g.op("TopK", masked, k, axis=0, largest=1, sorted=1, _outputs=2)
    cls_b, roi_b = g.Mod(q, i64(g, K)), g.Div(q, i64(g, K))
    rows = []
    for c, r in ((cls_a, roi_a), (cls_b, roi_b)):
        missing = g.Sub(i64(g, [D]), g.Shape(c))
        rows.append([g.Pad(t, g.Concat(i64(g, [0]), missing, axis=0)) for t in (c, r)])
    many = g.Greater(total, i64(g, D))
    cls, roi = (g.Where(many, b, a) for a, b in zip(rows[0], rows[1]))
    live = g.Less(g.Range(i64(g, 0), i64(g, D), i64(g, 1)), total)  # [D]
    idx = g.Concat(g.Unsqueeze(cls, i64(g, [1])), g.Unsqueeze(roi, i64(g, [1])), axis=1)  # [D, 2]
    zero = g.const(np.float32(0), np.float32)
    out_boxes = g.Where(g.Unsqueeze(live, i64(g, [1])), g.GatherND(boxes, idx), zero)
    out_scores = g.Where(live, g.GatherND(score, idx), zero)
    out_classes = g.Cast(g.Where(live, g.Add(cls, i64(g, 1)), i64(g, 0)), to=TensorProto.INT32)
    return [out_boxes, out_classes, out_scores]
