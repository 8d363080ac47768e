"""DetectionOutput-1/-8: the SSD head's box decoding, per-class NMS and top-k.

The lowering reproduces what OpenVINO's CPU plugin computes (its source and measurements; the
spec leaves order and ties open). Per image, with P priors and C classes:

1. Boxes are decoded (:mod:`~ir2onnx.ops._detection_output_decode`).
2. Candidates, Caffe style (decrease_label_id false): per class other than background_label_id,
   the priors whose score is strictly above confidence_threshold; the top_k best of them by
   (score descending, prior ascending), top_k -1 meaning all. MXNet style (decrease_label_id
   true, background 0): each prior is a candidate of the one class among 1..C-1 with the highest
   score (the smallest class on equal scores) when that score is >= confidence_threshold (and
   > -1); top_k applies to the image's candidates by (score descending, class * P + prior
   ascending). With the two ARM inputs, a prior whose arm_confidence[p, 1] is below
   objectness_score gets the scores 1 for background_label_id and 0 for the other classes.
3. Greedy NMS per class, in (score descending, prior ascending) order: a candidate is dropped when
   its IoU with a box kept before it is strictly above nms_threshold (an f32). The plugin's
   ``JaccardOverlap`` is 0 when the boxes are apart or a side ``min(max) - max(min)`` of their
   intersection is <= 0 (touching boxes, and every inverted box: that side is at most its own
   negative one), else ``w * h / (size1 + size2 - w * h)`` in f32 with the sizes ``(xmax - xmin)
   * (ymax - ymin)`` of the decoded boxes: no ``+ 1``, also when not normalized (its coordOffset 1
   only skips the priors' image id). A NaN IoU (infinite or NaN corners) suppresses nothing.
4. keep_top_k > -1: the image keeps its keep_top_k best detections by (score descending, prior
   ascending); OpenVINO leaves equal (score, prior) pairs of different classes unordered (a
   std::sort of pairs that parallel threads collect; it was measured keeping the larger class),
   ir2onnx keeps the smaller class.
5. Output ``[1, 1, N * R, 7]`` (R = keep_top_k if > 0, else top_k * C if top_k > 0, else P * C):
   rows ``[image, label, score, xmin, ymin, xmax, ymax]`` image by image, class by class
   ascending, in (score descending, prior ascending) order within a class; label is the class
   (minus 1 with decrease_label_id); clip_after_nms clamps the coordinates to [0, 1]. After the
   last detection one row starts with -1, the rest is zeros.

ONNX: scores that are not candidates become -inf (Where; top_k by TopK + ScatterElements), ONNX
NonMaxSuppression runs with score_threshold -inf (``s > -inf`` keeps exactly the candidates) and
``min(nms_threshold, 1)`` on boxes whose inverted ones are zeroed (a zero box overlaps nothing).
That is the plugin's computation (onnxruntime's CPU kernel, read, and
tests/test_detection_output_nms.py, exact on the edges): it pops the boxes by (score descending,
index ascending); ``SuppressByIOU`` is false where an intersection side has ``max <= min`` (the
plugin's ``max - min <= 0``; for the same infinity on both the plugin's side is NaN and so is its
IoU), else ``inter / (area1 + area2 - inter) > t`` with the same f32 products (ONNX's y-first
corners only swap the operands of commutative operations) and areas from min/max-ordered corners,
the plugin's for boxes that are not inverted; std::max/min pick the same operand of a NaN corner
in both. An f32 IoU is never above 1 (``inter`` <= each size, so ``size1 + size2`` rounds to >= 2 *
``inter`` and the union to >= ``inter``): the clamp to 1 (onnxruntime refuses more) changes
nothing. share_location false runs it on N * C batches of one class. The kept scores go through
one TopK over ``[N, P * C]`` (ties: the smaller index = prior, then class), a TopK on
``class * k + position`` groups them by class, Compress drops the empty rows and Concat/Slice add
the -1 row and the zeros. Refused: CORNER_SIZE (not in the spec; OpenVINO's own op refuses to be
built with it), a negative nms_threshold (it would suppress boxes that do not overlap), priors or class
counts known only at run time.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.element_types import element_type
from ..lowering.builder import Value
from ..lowering.registry import lowers
from ._common.shapes import i64
from ._detection_output_decode import F32, Priors, decoded_boxes, f32

INF = np.float32(np.inf)
CODES = ("caffe.PriorBoxParameter.CENTER_SIZE", "caffe.PriorBoxParameter.CORNER")


@lowers("DetectionOutput", "opset1")
def detection_output1(ctx, layer, inputs):
    """DetectionOutput-1 (box_logits, class_preds, proposals[, arm_conf, arm_loc]; num_classes) ->
    decoding (Mul, Add, Exp, Clip), Where, TopK, ScatterElements, NonMaxSuppression, ScatterND,
    TopK, GatherND, Concat, Compress, Slice, Reshape."""
    return lower(ctx, layer, inputs, layer.attrs["num_classes"])


@lowers("DetectionOutput", "opset8")
def detection_output8(ctx, layer, inputs):
    """DetectionOutput-8 (box_logits, class_preds, proposals[, arm_conf, arm_loc]) -> as
    DetectionOutput-1, num_classes = class_preds.shape[-1] // num_priors."""
    return lower(ctx, layer, inputs, None)


def _sizes(layer, loc: Value, conf: Value, priors: Value, num_classes: int | None) -> tuple[int, int, int]:
    """(P, C, L) from the static shapes."""
    for v, what, rank in ((loc, "box_logits", 2), (conf, "class_preds", 2), (priors, "proposals", 3)):
        if v.etype is None or v.etype.name not in ("f32", "f16"):
            raise UnsupportedLayer(layer, f"{what} of type {v.etype.name if v.etype else '?'} (f32, f16 only)")
        if v.rank != rank:
            raise InvalidLayer(layer, f"{what} must be {rank}-D, got {v.shape}")
    if priors.shape[1] is None or priors.shape[2] is None or conf.shape[1] is None:
        raise UnsupportedLayer(layer, "the number of priors and classes must be known at convert time")
    size = 4 if layer.attrs["normalized"] else 5
    if priors.shape[2] % size:
        raise InvalidLayer(layer, f"proposals' last dim {priors.shape[2]} is not a multiple of {size}")
    p = priors.shape[2] // size
    c = num_classes if num_classes is not None else conf.shape[1] // max(p, 1)
    if p == 0 or c <= 0 or conf.shape[1] != p * c:
        raise InvalidLayer(layer, f"class_preds' last dim {conf.shape[1]} is not num_priors {p} * classes")
    num_loc = 1 if layer.attrs["share_location"] else c
    if loc.shape[1] is not None and loc.shape[1] != p * num_loc * 4:
        raise InvalidLayer(layer, f"box_logits' last dim {loc.shape[1]} is not {p} * {num_loc} * 4")
    return p, c, num_loc


def _check_attrs(layer) -> None:
    a = layer.attrs
    if a["code_type"] not in CODES:
        raise UnsupportedLayer(layer, f"code_type {a['code_type']} (the spec and OpenVINO have "
                                      "CENTER_SIZE and CORNER only)")
    if not a["nms_threshold"] >= 0:
        raise UnsupportedLayer(layer, f"nms_threshold {a['nms_threshold']} suppresses boxes that do not overlap; "
                                      "ONNX NonMaxSuppression never does")
    if not a["keep_top_k"]:
        raise InvalidLayer(layer, "keep_top_k is empty")
    if a["top_k"] < -1:
        raise InvalidLayer(layer, f"top_k {a['top_k']} (-1 or more)")
    if a["decrease_label_id"] and a["background_label_id"] != 0:
        raise InvalidLayer(layer, "decrease_label_id needs background_label_id 0 (OpenVINO refuses it too)")
    if not a["normalized"] and (a["input_width"] <= 0 or a["input_height"] <= 0):
        raise InvalidLayer(layer, "input_width and input_height must be positive")


def _top(g, masked: str, k: int, axis: int) -> str:
    """``masked`` with all but its ``k`` best entries along ``axis`` set to -inf."""
    _, idx = g.TopK(masked, i64(g, [k]), axis=axis, largest=1, sorted=1, _outputs=2)
    ones = g.Expand(g.const(1.0, np.float32), g.Shape(idx))
    picked = g.ScatterElements(g.ConstantOfShape(g.Shape(masked)), idx, ones, axis=axis)
    return g.Where(g.Greater(picked, g.const(0.0, np.float32)), masked, g.const(-INF, np.float32))


def _candidates(g, layer, scores: str, active: str | None, p: int, c: int) -> str:
    """Scores ``[N, C, P]`` where candidates keep their score and the rest is -inf."""
    a = layer.attrs
    thr = g.const(np.float32(a["confidence_threshold"]), np.float32)
    neg = g.const(-INF, np.float32)
    classes = np.arange(c).reshape(1, c, 1)
    if not a["decrease_label_id"]:
        ok = g.Greater(scores, thr)
        if 0 <= a["background_label_id"] < c:
            ok = g.And(ok, g.const(classes != a["background_label_id"], np.bool_))
        if active is not None:
            ok = g.And(ok, active)
        masked = g.Where(ok, scores, neg)
        k = a["top_k"]
        return masked if k == -1 or k >= p else _top(g, masked, k, 2) if k > 0 else \
            g.Where(g.const(False, np.bool_), masked, neg)
    ok = g.And(g.GreaterOrEqual(scores, thr), g.Greater(scores, g.const(-1.0, np.float32)))
    ok = g.And(ok, g.const(classes != 0, np.bool_))
    if active is not None:
        ok = g.And(ok, active)
    masked = g.Where(ok, scores, neg)
    best = g.ArgMax(masked, axis=1, keepdims=1)  # first of equal maxima: the smaller class
    ok = g.And(ok, g.Equal(g.Expand(best, g.Shape(scores)), g.const(classes, np.int64)))
    masked = g.Where(ok, scores, neg)
    k = a["top_k"]
    if k == -1 or k >= c * p:
        return masked
    if k == 0:
        return g.Where(g.const(False, np.bool_), masked, neg)
    flat = _top(g, g.Reshape(masked, i64(g, [-1, c * p])), k, 1)  # ties: class * P + prior
    return g.Reshape(flat, i64(g, [-1, c, p]))


def _nms(g, layer, boxes: str, masked: str, p: int, c: int, num_loc: int) -> str:
    """The kept scores ``[N, C, P]`` (-inf elsewhere) after greedy NMS per image and class."""
    xy_min, xy_max = (g.Slice(boxes, i64(g, [s]), i64(g, [s + 2]), i64(g, [-1])) for s in (0, 2))
    less = g.Less(xy_max, xy_min)
    inverted = g.Or(*(g.Slice(less, i64(g, [s]), i64(g, [s + 1]), i64(g, [-1])) for s in (0, 1)))
    nms_boxes = g.Where(inverted, g.const(0.0, np.float32), boxes)
    if num_loc == 1:
        nb, ns = g.Reshape(nms_boxes, i64(g, [-1, p, 4])), masked
    else:
        nb = g.Reshape(g.Transpose(nms_boxes, perm=[0, 2, 1, 3]), i64(g, [-1, p, 4]))
        ns = g.Reshape(masked, i64(g, [-1, 1, p]))
    iou = np.float32(min(float(layer.attrs["nms_threshold"]), 1.0))
    selected = g.NonMaxSuppression(nb, ns, i64(g, [p]), g.const([iou], np.float32),
                                   g.const([-INF], np.float32))
    ones = g.Expand(g.const(1.0, np.float32), g.Slice(g.Shape(selected), i64(g, [0]), i64(g, [1])))
    kept = g.ScatterND(g.ConstantOfShape(g.Shape(ns)), selected, ones)
    kept = g.Reshape(kept, i64(g, [-1, c, p]))
    return g.Where(g.Greater(kept, g.const(0.0, np.float32)), masked, g.const(-INF, np.float32))


def _rows_per_image(layer, p: int, c: int) -> int:
    a = layer.attrs
    keep, top = a["keep_top_k"][0], a["top_k"]
    return keep if keep > 0 else top * c if top > 0 else p * c


def lower(ctx, layer, inputs, num_classes):
    """The shared lowering of DetectionOutput-1 and -8 (see the module docstring)."""
    if len(inputs) not in (3, 5):
        raise InvalidLayer(layer, f"3 or 5 inputs, got {len(inputs)}")
    _check_attrs(layer)
    loc, conf, priors = inputs[:3]
    arm_conf, arm_loc = (inputs[3], inputs[4]) if len(inputs) == 5 else (None, None)
    p, c, num_loc = _sizes(layer, loc, conf, priors, num_classes)
    a = layer.attrs
    g = ctx.b
    pri = Priors(g, layer, priors, p)
    boxes = decoded_boxes(g, layer, pri, loc, arm_loc, p, num_loc)  # [N, P, L, 4]
    scores = g.Transpose(g.Reshape(f32(g, conf), i64(g, [-1, p, c])), perm=[0, 2, 1])  # [N, C, P]
    if arm_conf is not None:
        objectness = g.Reshape(f32(g, arm_conf), i64(g, [-1, 1, p, 2]))
        low = g.Less(g.Reshape(g.Gather(objectness, i64(g, 1), axis=3), i64(g, [-1, 1, p])),
                     g.const(np.float32(a["objectness_score"]), np.float32))
        fixed = (np.arange(c) == a["background_label_id"]).astype(np.float32).reshape(1, c, 1)
        scores = g.Where(low, g.const(fixed, np.float32), scores)
    masked = _candidates(g, layer, scores, pri.active, p, c)
    kept = _nms(g, layer, boxes, masked, p, c, num_loc)

    rows = _rows_per_image(layer, p, c)
    keep = a["keep_top_k"][0]
    k0 = min(rows, p * c)
    flat = g.Reshape(g.Transpose(kept, perm=[0, 2, 1]), i64(g, [-1, p * c]))  # index = prior * C + class
    vals, idx = g.TopK(flat, i64(g, [k0]), axis=1, largest=1, sorted=1, _outputs=2)
    valid = g.Greater(vals, g.const(-INF, np.float32))
    if keep == 0:
        valid = g.And(valid, g.const(False, np.bool_))
    cls = g.Mod(idx, i64(g, c))
    key = g.Add(g.Mul(g.Where(valid, cls, i64(g, c)), i64(g, k0)), i64(g, np.arange(k0)))
    _, order = g.TopK(key, i64(g, [k0]), axis=1, largest=0, sorted=1, _outputs=2)
    idx, vals, cls = (g.GatherElements(t, order, axis=1) for t in (idx, vals, cls))
    valid = g.GatherElements(valid, order, axis=1)
    at = idx if num_loc == c else g.Div(idx, i64(g, c))  # row of [N, P * L, 4]
    box = g.GatherND(g.Reshape(boxes, i64(g, [-1, p * num_loc, 4])), g.Unsqueeze(at, i64(g, [2])), batch_dims=1)
    if a["clip_after_nms"]:
        box = g.Clip(box, g.const(0.0, np.float32), g.const(1.0, np.float32))
    label = g.Sub(cls, i64(g, 1)) if a["decrease_label_id"] else cls
    n_dim = g.Slice(g.Shape(vals), i64(g, [0]), i64(g, [1]))
    image = g.Expand(g.Unsqueeze(g.Range(i64(g, 0), g.Squeeze(n_dim, i64(g, [0])), i64(g, 1)), i64(g, [1])),
                     g.Shape(vals))
    columns = [g.Unsqueeze(g.Cast(t, to=F32), i64(g, [2])) for t in (image, label)]
    det = g.Concat(*columns, g.Unsqueeze(vals, i64(g, [2])), box, axis=2)  # [N, k0, 7]
    det = g.Compress(g.Reshape(det, i64(g, [-1, 7])), g.Reshape(valid, i64(g, [-1])), axis=0)
    total = g.Mul(n_dim, i64(g, [rows]))
    zeros = g.Expand(g.const(np.zeros((1, 7)), np.float32), g.Concat(total, i64(g, [7]), axis=0))
    end = g.const(np.array([[-1, 0, 0, 0, 0, 0, 0]]), np.float32)
    out = g.Slice(g.Concat(det, end, zeros, axis=0), i64(g, [0]), total, i64(g, [0]))
    out = g.Reshape(out, i64(g, [1, 1, -1, 7]))
    etype = layer.outputs[0].etype or element_type("f32")
    if etype.name != "f32":
        out = g.Cast(out, to=etype.onnx)
    n = loc.shape[0] if loc.shape[0] is not None else conf.shape[0]
    return [Value(g, etype, (1, 1, None if n is None else n * rows, 7), name=out)]
