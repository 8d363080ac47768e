"""MatrixNms-8: matrix NMS (scores decayed by the overlaps) with OpenVINO's keep/sort rules.

Facts the lowering relies on (OpenVINO's MatrixNms specification, PaddlePaddle's matrix_nms, the
framework that writes it, and OpenVINO's CPU plugin, measured):

- boxes [N, M, 4] as (x1, y1, x2, y2), scores [N, C, M]; per image and class (``background_class``
  skipped) a box is a candidate when ``score > score_threshold``; candidates are ordered by
  descending score and the first ``nms_top_k`` (all for -1) are decayed.
- IoU (f32) of boxes a, b: 0 when ``b.x1 > a.x2 or b.x2 < a.x1 or b.y1 > a.y2 or b.y2 < a.y1``,
  else ``inter / (area_a + area_b - inter)`` with ``inter = (min x2 - max x1 + n) * (min y2 -
  max y1 + n)``, ``area = (x2 - x1 + n) * (y2 - y1 + n)`` (0 for a flipped box), n = 1 when not
  ``normalized`` else 0.
- candidate i: ``max_iou[i]`` = max(0, IoU with earlier candidates); ``decay[i]`` = min(1,
  f(IoU(i, j), max_iou[j]) over earlier j) with f = ``(1 - iou) / (1 - max_iou)`` in double
  rounded to f32 (linear; PaddlePaddle's kernel and the spec: no epsilon) or
  ``exp((max_iou^2 - iou^2) * gaussian_sigma)`` (gaussian); NaNs take no part (std::max/std::min
  keep the running value). ``decay * score`` (f32) is kept when ``> post_threshold``.
- per image the kept boxes are ordered by (decayed score desc, class, box index); ``keep_top_k``
  (not -1) keeps the first ones; sort_result_type acts across batches only (OpenVINO's reference
  and CPU plugin: ``score`` orders all rows by (score desc, image, class, box), ``classid`` by
  (class, image, score desc, box)); without sort_result_across_batch every type gives the
  per-image score order. An image without detections gives 0 rows; later images go on.
- outputs: selected_outputs [K, 6] rows [class, decayed score, x1, y1, x2, y2] (K = total kept,
  no padding, as the CPU plugin returns), selected_indices [K, 1] = image * M + box,
  valid_outputs [N].

ONNX chain and tolerances: candidates are a Where to -inf and one TopK per image and class
(onnxruntime's TopK puts equal scores in box order: the spec and the framework's std::partial_sort
leave their order open; it changes the decay only where tied boxes overlap); the IoU matrix
[N, C, K, K] repeats the f32 formula operation by operation (bit for bit); the linear decay runs
in f64 as PaddlePaddle's does (OpenVINO adds 1e-10 to the divisor, its CPU plugin runs in f32:
1 ulp apart); the gaussian exp runs in f64 and is rounded to f32 (glibc's expf may differ by
1 ulp; equal on every tested case); a decayed score within an ulp of post_threshold may therefore
decide differently; the orders are stable TopKs over (class * M + box), the decayed score, then
across batches.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.builder import Value
from ..lowering.registry import lowers
from ._common.nms_outputs import nms_outputs
from ._common.shapes import i64

FLOATS = ("f32", "f16", "bf16")
F32, F64, I64 = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64


def _check(layer, boxes: Value, scores: Value) -> None:
    for v, what in ((boxes, "boxes"), (scores, "scores")):
        name = v.etype.name if v.etype else "?"
        if name not in FLOATS:
            raise UnsupportedLayer(layer, f"{what} of type {name} are not supported ({', '.join(FLOATS)})")
        if v.rank != 3:
            raise InvalidLayer(layer, f"{what} must be 3-D, got rank {v.rank}")
    if boxes.shape[2] is not None and boxes.shape[2] != 4:
        raise InvalidLayer(layer, f"boxes must be [N, M, 4], got last dim {boxes.shape[2]}")
    for name in ("score_threshold", "post_threshold", "gaussian_sigma"):
        if np.isnan(np.float32(layer.attrs[name])):
            raise InvalidLayer(layer, f"{name} must not be NaN")


def _f32(g, value: float, hint: str) -> str:
    return g.const(np.float32(value), np.float32, hint)


def _reduce(g, op: str, x: str, axis: int) -> str:
    """ReduceMax/ReduceMin over one axis (axes an input from opset 18)."""
    if g.opset >= 18:
        return g.op(op, x, i64(g, [axis]), keepdims=0)
    return g.op(op, x, axes=[axis], keepdims=0)


def _stable_order(g, keys: str, largest: int, axis: int) -> str:
    """Positions that sort ``keys`` along ``axis``, equal keys by position (onnxruntime's TopK)."""
    n = g.Slice(g.Shape(keys), i64(g, [axis]), i64(g, [axis + 1]))
    _, order = g.TopK(keys, n, axis=axis, largest=largest, sorted=1, _outputs=2)
    return order


def _iou(g, sb: str, normalized: bool) -> str:
    """The IoU matrix [N, C, K, K] of the sorted boxes sb [N, C, K, 4] (row i, column j)."""
    x1, y1, x2, y2 = g.Split(sb, i64(g, [1, 1, 1, 1]), axis=3, _outputs=4)  # [N, C, K, 1] each
    cols = [g.Unsqueeze(g.Squeeze(v, i64(g, [3])), i64(g, [2])) for v in (x1, y1, x2, y2)]  # [N, C, 1, K]
    ax1, ay1, ax2, ay2 = x1, y1, x2, y2
    bx1, by1, bx2, by2 = cols
    zero = _f32(g, 0, "zero")
    apart = g.Or(g.Or(g.Greater(bx1, ax2), g.Less(bx2, ax1)), g.Or(g.Greater(by1, ay2), g.Less(by2, ay1)))

    def plus_norm(v):
        return v if normalized else g.Add(v, _f32(g, 1, "one"))
    inter = g.Mul(plus_norm(g.Sub(g.Min(ax2, bx2), g.Max(ax1, bx1))),
                  plus_norm(g.Sub(g.Min(ay2, by2), g.Max(ay1, by1))))

    def area(v1, w1, v2, w2):
        flipped = g.Or(g.Less(v2, v1), g.Less(w2, w1))
        return g.Where(flipped, zero, g.Mul(plus_norm(g.Sub(v2, v1)), plus_norm(g.Sub(w2, w1))))
    union = g.Sub(g.Add(area(ax1, ay1, ax2, ay2), area(bx1, by1, bx2, by2)), inter)
    return g.Where(apart, zero, g.Div(inter, union))


def _decay(g, iou: str, max_iou: str, layer) -> str:
    """f(iou[i, j], max_iou[j]) elementwise ([N, C, K, K] with max_iou [N, C, 1, K])."""
    if layer.attrs["decay_function"] == "gaussian":
        sigma = _f32(g, layer.attrs["gaussian_sigma"], "gaussian_sigma")
        power = g.Mul(g.Sub(g.Mul(max_iou, max_iou), g.Mul(iou, iou)), sigma)
        return g.Cast(g.Exp(g.Cast(power, to=F64)), to=F32)
    one = g.const(np.float64(1), np.float64, "one_f64")
    num, den = g.Sub(one, g.Cast(iou, to=F64)), g.Sub(one, g.Cast(max_iou, to=F64))
    return g.Cast(g.Div(num, den), to=F32)


def _decayed(g, layer, bx: str, sc: str):
    """Per image and class the first K candidates: decayed scores [N, C, K] (-inf where not
    kept) and their box indices [N, C, K]."""
    a = layer.attrs
    minus_inf = _f32(g, -np.inf, "minus_inf")
    classes = g.Range(i64(g, 0), g.Squeeze(g.Slice(g.Shape(sc), i64(g, [1]), i64(g, [2])), i64(g, [0])),
                      i64(g, 1))
    cand = g.Greater(sc, _f32(g, a["score_threshold"], "score_threshold"))
    bg = int(a["background_class"])
    if bg >= 0:
        cand = g.And(cand, g.Unsqueeze(g.Not(g.Equal(classes, i64(g, bg, "background"))), i64(g, [1])))
    m = g.Slice(g.Shape(sc), i64(g, [2]), i64(g, [3]))
    top = int(a["nms_top_k"])
    k = m if top < 0 else g.Min(m, i64(g, [top], "nms_top_k"))
    vals, order = g.TopK(g.Where(cand, sc, minus_inf), k, axis=2, largest=1, sorted=1, _outputs=2)
    valid = g.Greater(vals, minus_inf)  # a candidate's score is > score_threshold >= -inf
    sb = g.GatherND(bx, g.Unsqueeze(order, i64(g, [3])), batch_dims=1)  # [N, C, K, 4]
    iou = _iou(g, sb, bool(a["normalized"]))
    r = g.Range(i64(g, 0), g.Squeeze(k, i64(g, [0])), i64(g, 1))
    row, col = g.Unsqueeze(r, i64(g, [1])), g.Unsqueeze(r, i64(g, [0]))
    zero, one = _f32(g, 0, "zero"), _f32(g, 1, "one")
    earlier_row = g.And(g.Less(row, col), g.Not(g.IsNaN(iou)))  # entry [k, j] with k < j
    max_iou = _reduce(g, "ReduceMax", g.Where(earlier_row, iou, zero), 2)  # [N, C, K] over k
    d = _decay(g, iou, g.Unsqueeze(max_iou, i64(g, [2])), layer)
    earlier_col = g.And(g.Less(col, row), g.Not(g.IsNaN(d)))  # entry [i, j] with j < i
    decay = _reduce(g, "ReduceMin", g.Where(earlier_col, d, one), 3)  # [N, C, K] over j
    ds = g.Mul(decay, vals)
    keep = g.And(valid, g.Greater(ds, _f32(g, a["post_threshold"], "post_threshold")))
    return g.Where(keep, ds, minus_inf), order, keep, k


@lowers("MatrixNms", "opset8")
def matrix_nms8(ctx, layer, inputs):
    """MatrixNms-8 (boxes[N,M,4], scores[N,C,M]) -> Cast, Where + TopK (candidates, nms_top_k),
    GatherND, IoU matrix (Min, Max, Sub, Mul, Div, Where), ReduceMax/ReduceMin under triangular
    masks, Mul (decayed scores), stable TopK orders (per image, keep_top_k, across batch),
    NonZero, GatherND, Concat."""
    boxes, scores = inputs[0], inputs[1]
    _check(layer, boxes, scores)
    a = layer.attrs
    g = ctx.b
    bx = boxes.name if boxes.etype.name == "f32" else g.Cast(boxes, to=F32)
    sc = scores.name if scores.etype.name == "f32" else g.Cast(scores, to=F32)
    ds, order, keep, k = _decayed(g, layer, bx, sc)
    n_img = g.Slice(g.Shape(sc), i64(g, [0]), i64(g, [1]))
    m = g.Slice(g.Shape(bx), i64(g, [1]), i64(g, [2]))
    flat = g.Concat(n_img, i64(g, [-1]), axis=0)
    cls = g.Expand(g.Unsqueeze(g.Range(i64(g, 0), g.Squeeze(g.Slice(g.Shape(sc), i64(g, [1]), i64(g, [2])),
                                                                   i64(g, [0])), i64(g, 1)), i64(g, [1])),
                   g.Shape(order))
    ds_f, cls_f, box_f = (g.Reshape(v, flat) for v in (ds, cls, order))  # [N, C*K], class-major
    # per image: (decayed score desc, class, box): box order within class first, then stable by score
    p1 = _stable_order(g, g.Add(g.Mul(cls_f, m), box_f), 0, 1)
    perm = g.GatherElements(p1, _stable_order(g, g.GatherElements(ds_f, p1, axis=1), 1, 1), axis=1)
    counts = g.ReduceSum(g.Cast(keep, to=I64), i64(g, [1, 2]), keepdims=0)  # [N]
    keep_top_k = int(a["keep_top_k"])
    if keep_top_k > -1:
        counts = g.Min(counts, i64(g, keep_top_k, "keep_top_k"))
    rank = g.Range(i64(g, 0), g.Squeeze(g.Slice(g.Shape(perm), i64(g, [1]), i64(g, [2])), i64(g, [0])), i64(g, 1))
    chosen = g.Transpose(g.NonZero(g.Less(g.Unsqueeze(rank, i64(g, [0])), g.Unsqueeze(counts, i64(g, [1])))))
    b = g.Gather(chosen, i64(g, 0), axis=1)  # [R] image of each row, image-major then score order
    pos = g.GatherND(perm, chosen)  # [R] flat position in the image's [C*K]
    at = g.Concat(g.Unsqueeze(b, i64(g, [1])), g.Unsqueeze(pos, i64(g, [1])), axis=1)
    s, c, box = (g.GatherND(v, at) for v in (ds_f, cls_f, box_f))
    if a["sort_result_across_batch"] and a["sort_result_type"] == "score":
        o = _stable_order(g, s, 1, 0)
        s, c, box, b = (g.Gather(v, o) for v in (s, c, box, b))
    elif a["sort_result_across_batch"] and a["sort_result_type"] == "classid":
        o = _stable_order(g, c, 0, 0)
        s, c, box, b = (g.Gather(v, o) for v in (s, c, box, b))
    coords = g.GatherND(bx, g.Concat(g.Unsqueeze(b, i64(g, [1])), g.Unsqueeze(box, i64(g, [1])), axis=1))
    return nms_outputs(g, layer, c, s, coords, g.Add(g.Mul(b, m), box), counts, boxes.etype)
