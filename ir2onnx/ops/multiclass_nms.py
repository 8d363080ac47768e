"""MulticlassNms-8/-9: per-class greedy NMS with OpenVINO's keep/sort rules.

Facts the lowering relies on (OpenVINO's MulticlassNms specification and reference):

- boxes [N, M, 4] as (x1, y1, x2, y2), scores [N, C, M]; per image and class (the class
  ``background_class`` skipped) a box is a candidate when ``score >= score_threshold``; the
  candidates are ordered by descending score, equal scores by the smaller box index; only the
  first ``nms_top_k`` of them (all for -1) enter NMS.
- NMS (OpenVINO's CPU plugin, ``intersectionOverUnion``): a candidate is dropped when its IoU
  with a box already kept is ``>= iou_threshold``; in float32 with ``o`` = 1 when ``normalized``
  is false, else 0: ``area = (x2 - x1 + o) * (y2 - y1 + o)``, IoU 0 when either area is ``<= 0``,
  else ``inter / (area_a + area_b - inter)``, ``inter = max(min(x2) - max(x1) + o, 0) * max(min(y2)
  - max(y1) + o, 0)`` (no touch test: a NaN IoU drops nothing).
- ``nms_eta`` lowers the threshold only while it is above 0.5 (eta < 1): refused where it acts
  (eta < 1 and iou_threshold > 0.5). With 0 <= eta < 1 the plugin runs another loop
  (``nmsWithEta``), which differs even where the threshold stays: it compares the kept boxes
  latest first and stops at the first IoU >= threshold (dropped), or NaN (the score times 0:
  dropped unless the score is 0), or, for a score equal to ``score_threshold``, after the first
  one (kept if its IoU is below the threshold: measured). A box with a NaN IoU goes back to the
  queue when ``0 > score_threshold``: refused. So a box whose score is above score_threshold is
  dropped by any kept box with IoU >= threshold or NaN, one at the threshold by the latest kept
  box only (NaN: dropped unless its score is 0): greedy_nms's ``nan_drops`` and ``latest_only``.
- per image the kept boxes are ordered by descending score, then class, then box index;
  ``keep_top_k`` (not -1) keeps the first ones. sort_result_type ``classid`` reorders them by
  class, then descending score, then box index; ``score`` and ``none`` keep the score order.
  With sort_result_across_batch, ``score`` orders all rows by (score desc, image, class, box),
  ``classid`` by (class, image, score desc, box); ``none`` keeps the per-image order.
- outputs: selected_outputs rows [class, score, x1, y1, x2, y2] (rows = total kept, no padding,
  as OpenVINO's CPU plugin returns), selected_indices [K, 1] = image * M + box,
  selected_num [N].

ONNX chain: candidates (``score >= score_threshold``) sorted by TopK (non-candidates as -inf;
onnxruntime's TopK orders equal keys by the smaller position), the first min(nms_top_k, M)
positions, then the greedy NMS Loop of ``ops/_common/greedy_nms.py`` over them with every (image,
class) as one of its images (offset ``o``, no touch test, ``flat_is_apart``; ``IoU >= t`` as ``t'
< IoU`` with t' the next float32 below t), NonZero of the kept flags, which gives
NonMaxSuppression's (image, class, score desc, box) rows. ONNX's NonMaxSuppression is not used: it
has no offset (adding 1 to x2 rounds differently from ``x2 - x1 + 1``: measured on boxes at 3e7
and on sub-pixel boxes, tests/test_multiclass_nms.py), it takes min/max of the corners and it
has no area test. The row orders come from onnxruntime's TopK (stable) over those rows.
The roisnum form of -9 (boxes [C, S, 4] and scores [C, S] per class, image i holding the next
roisnum[i] boxes; a non-positive count: none) gathers image i, class c into NMS batch i*C + c,
padded to the largest count; its selected_indices are (position in S) * C + class.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.builder import Value
from ..lowering.registry import lowers
from ._common.greedy_nms import greedy_nms
from ._common.nms_outputs import nms_outputs
from ._common.shapes import i64

FLOATS = ("f32", "f16", "bf16")
F32 = TensorProto.FLOAT
I64 = TensorProto.INT64


@lowers("MulticlassNms", "opset8")
def multiclass_nms8(ctx, layer, inputs):
    """MulticlassNms-8 (boxes[N,M,4], scores[N,C,M]) -> Cast, TopK + ScatterElements (nms_top_k),
    NonMaxSuppression, Compress (background), GatherND, TopK/Gather (orders, keep_top_k), Concat."""
    return multiclass_nms(ctx, layer, inputs)


@lowers("MulticlassNms", "opset9")
def multiclass_nms9(ctx, layer, inputs):
    """MulticlassNms-9 (boxes[N,M,4], scores[N,C,M]) -> Cast, TopK + ScatterElements (nms_top_k),
    NonMaxSuppression, Compress (background), GatherND, TopK/Gather (orders, keep_top_k), Concat;
    the roisnum form (boxes[C,S,4], scores[C,S], roisnum[N]) gathers each image into its own
    NonMaxSuppression batch rows first (Range, Gather, Transpose, Reshape)."""
    if len(inputs) > 2 and inputs[2] is not None:
        return multiclass_nms(ctx, layer, inputs[:2], inputs[2])
    return multiclass_nms(ctx, layer, inputs[:2])


def _check(layer, boxes: Value, scores: Value, per_class: bool) -> None:
    for v, what in ((boxes, "boxes"), (scores, "scores")):
        name = v.etype.name if v.etype else "?"
        if name not in FLOATS:
            raise UnsupportedLayer(layer, f"{what} of type {name} are not supported ({', '.join(FLOATS)})")
    for v, rank, what in ((boxes, 3, "boxes"), (scores, 2 if per_class else 3, "scores")):
        if v.rank != rank:
            raise InvalidLayer(layer, f"{what} must be {rank}-D here, got rank {v.rank}")
    if boxes.shape[2] is not None and boxes.shape[2] != 4:
        raise InvalidLayer(layer, f"boxes must be [N, M, 4], got last dim {boxes.shape[2]}")


def _next_below(x: float) -> np.float32:
    return np.nextafter(np.float32(x), np.float32(-np.inf))


def _stable_order(g, keys: str, largest: int) -> str:
    """Positions that sort ``keys`` (1-D), equal keys by position (onnxruntime's TopK)."""
    _, order = g.TopK(keys, g.Shape(keys), axis=0, largest=largest, sorted=1, _outputs=2)
    return order


def _select(g, scope, bx: str, sc: str, pad_ok, m: str, nms_top_k: int, score_t, iou_t, normalized: bool,
            eta_loop: bool) -> str:
    """The kept (batch, class, box) rows [S, 3] in (batch, class, score desc, box) order of boxes
    [B, M, 4] and scores [B, C, M] (``pad_ok``: a mask of real boxes, or None): the candidates
    (score >= score_t) sorted by score desc, then box (onnxruntime's TopK is stable), the first
    min(nms_top_k, M) positions, greedy NMS over them per batch and class (``eta_loop``: the
    plugin's nms_eta loop, see the module docstring)."""
    cand = g.GreaterOrEqual(sc, g.const(np.float32(score_t), np.float32, "score_threshold"))
    if pad_ok is not None:
        cand = g.And(cand, pad_ok)
    minus_inf = g.const(np.float32(-np.inf), np.float32, "minus_inf")
    k = m if nms_top_k < 0 else g.Min(m, i64(g, [nms_top_k], "nms_top_k"))
    _, order = g.TopK(g.Where(cand, sc, minus_inf), m if score_t == -np.inf else k, axis=2, largest=1, sorted=1,
                      _outputs=2)
    if score_t == -np.inf:  # candidates at -inf tie with the others: candidates first (stable)
        _, first = g.TopK(g.Cast(g.GatherElements(cand, order, axis=2), to=F32), k, axis=2, largest=1, sorted=1,
                          _outputs=2)
        order = g.GatherElements(order, first, axis=2)
    shape = g.Shape(order)  # [B, C, K]
    rows = g.Concat(g.Mul(_dims(g, order, 0, 1), _dims(g, order, 1, 2)), i64(g, [-1]), axis=0)
    cand_sorted = g.GatherElements(cand, order, axis=2)
    keep0 = g.Reshape(g.Cast(cand_sorted, to=F32), rows)
    nan_drops = latest_only = None
    if eta_loop:
        ssc = g.GatherElements(sc, order, axis=2)
        latest_only = g.Reshape(g.And(cand_sorted, g.Equal(ssc, g.const(np.float32(score_t), np.float32, "score_t"))),
                                rows)
        nan_drops = g.Reshape(g.Not(g.Equal(ssc, g.const(np.float32(0), np.float32, "zero"))), rows)
    sboxes = g.GatherND(bx, g.Unsqueeze(order, i64(g, [3])), batch_dims=1)  # [B, C, K, 4]
    sboxes = g.Reshape(sboxes, g.Concat(rows, i64(g, [4]), axis=0))
    f32 = lambda v, hint: g.const(np.float32(v), np.float32, hint)  # noqa: E731
    kept = greedy_nms(g, scope, sboxes, keep0, _dims(g, order, 2, 3), f32(0 if normalized else 1, "offset"),
                      f32(_next_below(iou_t), "iou_threshold"), touch_test=False, flat_is_apart=True,
                      nan_drops=nan_drops, latest_only=latest_only)
    nz = g.Transpose(g.NonZero(g.Cast(g.Reshape(kept, shape), to=TensorProto.BOOL)), perm=[1, 0])  # [S, 3]
    box = g.GatherND(order, nz)
    return g.Concat(g.Gather(nz, i64(g, [0, 1]), axis=1), g.Unsqueeze(box, i64(g, [1])), axis=1)


def _dims(g, x: str, start: int, end: int) -> str:
    """Shape(x)[start:end] (Shape's start/end attributes need opset 15)."""
    return g.Slice(g.Shape(x), i64(g, [start]), i64(g, [end]), i64(g, [0]))


def _per_image(g, layer, bx: str, sc: str, roisnum: Value):
    """The roisnum form as NMS batches: image i, class c -> batch i*C + c holding boxes
    start_i .. start_i + roisnum_i - 1 (padded to the largest count; padding scores -inf and a
    mask). Returns boxes [N*C, R, 4], scores [N*C, 1, R], the mask, starts [N], C [1], N [1]."""
    if not roisnum.etype.is_integer:
        raise InvalidLayer(layer, f"roisnum must be an integer tensor, got {roisnum.etype.name}")
    rn = roisnum.name if roisnum.etype.name == "i64" else g.Cast(roisnum, to=I64)
    rn = g.Max(g.Reshape(rn, i64(g, [-1])), i64(g, 0))  # a non-positive count selects nothing
    starts = g.CumSum(rn, i64(g, 0), exclusive=1)
    longest = g.Max(g.ReduceMax(rn, keepdims=0), i64(g, 0))
    j = g.Range(i64(g, 0), longest, i64(g, 1))
    valid = g.Less(g.Unsqueeze(j, i64(g, [0])), g.Unsqueeze(rn, i64(g, [1])))  # [N, R]
    pos = g.Where(valid, g.Add(g.Unsqueeze(starts, i64(g, [1])), g.Unsqueeze(j, i64(g, [0]))), i64(g, 0))
    n, c = g.Shape(rn), _dims(g, sc, 0, 1)
    rows = g.Concat(g.Mul(n, c), i64(g, [-1]), axis=0)
    bx = g.Reshape(g.Transpose(g.Gather(bx, pos, axis=1), perm=[1, 0, 2, 3]), g.Concat(rows, i64(g, [4]), axis=0))
    scp = g.Where(valid, g.Gather(sc, pos, axis=1), g.const(np.float32(-np.inf), np.float32, "minus_inf"))
    shape3 = g.Concat(g.Mul(n, c), i64(g, [1, -1]), axis=0)
    scp = g.Reshape(g.Transpose(scp, perm=[1, 0, 2]), shape3)
    mask = g.Reshape(g.Expand(g.Unsqueeze(valid, i64(g, [1])), g.Concat(n, c, _dims(g, valid, 1, 2), axis=0)), shape3)
    return bx, scp, mask, starts, c, n


def multiclass_nms(ctx, layer, inputs, roisnum: Value | None = None):
    """The shared lowering of MulticlassNms-8/-9 (see the module docstring)."""
    boxes, scores = inputs[0], inputs[1]
    _check(layer, boxes, scores, roisnum is not None)
    a = layer.attrs
    iou_t, score_t = np.float32(a["iou_threshold"]), np.float32(a["score_threshold"])
    eta = float(a["nms_eta"])
    if np.isnan(iou_t) or np.isnan(score_t):
        raise InvalidLayer(layer, "iou_threshold and score_threshold must not be NaN")
    if eta < 1 and iou_t > 0.5:
        raise UnsupportedLayer(layer, f"nms_eta {eta:g} < 1 with iou_threshold {iou_t:g} > 0.5 lowers the "
                                      "threshold as boxes are kept; the lowering has no adaptive threshold")
    eta_loop = 0 <= eta < 1
    if eta_loop and score_t < 0:
        raise UnsupportedLayer(layer, f"nms_eta {eta:g} < 1 with score_threshold {score_t:g} < 0: OpenVINO's loop "
                                      "puts a box whose IoU is NaN back in the queue with score 0")
    nms_top_k, keep_top_k, bg = int(a["nms_top_k"]), int(a["keep_top_k"]), int(a["background_class"])
    sort_type, across = a["sort_result_type"], bool(a["sort_result_across_batch"])
    g = ctx.b
    bx = boxes.name if boxes.etype.name == "f32" else g.Cast(boxes, to=F32)
    sc = scores.name if scores.etype.name == "f32" else g.Cast(scores, to=F32)
    if roisnum is not None:
        bx, sc, pad_ok, box_starts, n_cls, n_img = _per_image(g, layer, bx, sc, roisnum)
    else:
        n_img = _dims(g, bx, 0, 1)
    m = _dims(g, bx, 1, 2)  # [1] number of boxes
    sel = _select(g, layer.name, bx, sc, None if roisnum is None else pad_ok, m, nms_top_k, score_t, iou_t,
                  bool(a["normalized"]), eta_loop)
    b, c = g.Gather(sel, i64(g, 0), axis=1), g.Gather(sel, i64(g, 1), axis=1)
    if roisnum is not None:  # batch i*C + c
        n_c = g.Squeeze(n_cls, i64(g, [0]))
        b, c = g.Div(g.Gather(sel, i64(g, 0), axis=1), n_c), g.Mod(g.Gather(sel, i64(g, 0), axis=1), n_c)
    if bg >= 0:
        keep = g.Not(g.Equal(c, i64(g, bg, "background")))
        sel, b, c = (g.Compress(v, keep, axis=0) for v in (sel, b, c))
    s = g.GatherND(sc, sel)  # [K]
    # per image: score desc, then class and box (NMS's row order, kept by the stable sorts)
    o1 = _stable_order(g, s, 1)
    perm = g.Gather(o1, _stable_order(g, g.Gather(b, o1), 0))
    bs = g.Gather(b, perm)
    onehot = g.Cast(g.Equal(g.Unsqueeze(bs, i64(g, [1])),
                            g.Unsqueeze(g.Range(i64(g, 0), g.Squeeze(n_img, i64(g, [0])),
                                                i64(g, 1)), i64(g, [0]))), to=I64)
    counts = g.ReduceSum(onehot, i64(g, [0]), keepdims=0)  # [N]
    if keep_top_k > -1:
        first = g.CumSum(counts, i64(g, 0), exclusive=1)
        rank = g.Sub(g.Range(i64(g, 0), g.Squeeze(g.Shape(bs), i64(g, [0])), i64(g, 1)), g.Gather(first, bs))
        perm = g.Compress(perm, g.Less(rank, i64(g, keep_top_k, "keep_top_k")), axis=0)
        counts = g.Min(counts, i64(g, keep_top_k, "keep_top_k"))
    if sort_type == "classid":
        perm = g.Gather(perm, _stable_order(g, perm, 0))  # NMS's (image, class, score, box) order
        if across:
            perm = g.Gather(perm, _stable_order(g, g.Gather(c, perm), 0))
    elif sort_type == "score" and across:
        perm = g.Gather(perm, _stable_order(g, g.Gather(s, perm), 1))
    rows = g.Gather(sel, perm)
    bp, cp = g.Gather(b, perm), g.Gather(c, perm)
    ip = g.Gather(rows, i64(g, 2), axis=1)
    coords = g.GatherND(bx, g.Gather(rows, i64(g, [0, 2]), axis=1))
    if roisnum is None:
        index = g.Add(g.Mul(bp, m), ip)
    else:  # (the box's position in the concatenated images) * C + class
        index = g.Add(g.Mul(g.Add(g.Gather(box_starts, bp), ip), n_c), cp)
    return nms_outputs(g, layer, cp, g.Gather(s, perm), coords, index, counts, scores.etype)
