"""GenerateProposals-9: the region proposals of every image of a batch (PaddlePaddle's
generate_proposals_v2, Mask R-CNN heads).

Facts (OpenVINO's operation specification, reference implementation and CPU plugin, in our
words; the plugin's results were measured against the oracle):

- Inputs: im_info ``[N, 3]`` (height, width, one scale) or ``[N, 4]`` (height, width, scale_h,
  scale_w), anchors ``[H, W, A, 4]`` shared by the images, deltas ``[N, A * 4, H, W]`` (dx, dy,
  dlog w, dlog h of anchor a at channels 4a..4a+3), scores ``[N, A, H, W]``. Proposal i =
  (h, w, a) in that order.
- Decoding, float32, with the offset ``o`` = 1 (``normalized`` false) or 0: ``ww = x1 - x0 + o``,
  ``cx = x0 + 0.5 * ww``, ``pcx = dx * ww + cx``, ``pw = exp(min(dlog w, log(1000 / 16))) * ww``;
  ``x0 = pcx - 0.5 * pw``, ``x1 = pcx + 0.5 * pw - o``, each clamped to ``[0, width - o]`` (y to
  ``[0, height - o]``).
- The ``min(A * H * W, pre_nms_count)`` highest scores, highest first (equal scores: smaller
  proposal first here; OpenVINO's partial sort leaves them open). Of these, a box whose
  ``x1 - x0 + o`` is below ``min_size * scale_w`` or whose height is below ``min_size * scale_h``
  is dropped (it still took its place among the pre_nms_count).
- Greedy NMS in that order: a box is dropped when its IoU with a kept box exceeds nms_threshold:
  0 when they do not touch (``x0 <= x1'``, ``x0' <= x1``, likewise y, fails; measured: a
  negative nms_threshold keeps only the first box), else ``inter / (area + area' - inter)``, the
  sizes being ``max(0, min(x1, x1') - max(x0, x0') + o)`` and ``x1 - x0 + o``; at most
  post_nms_count kept.
- Outputs: the kept rows of image 0, then image 1, ...: rois ``[sum, 4]``, their scores
  ``[sum]``, and rois_num ``[N]`` (roi_num_type). The spec's adaptive threshold (nms_eta < 1) is
  implemented by neither OpenVINO's CPU plugin nor its reference, and its op validation refuses
  any nms_eta but 1: so does ir2onnx.

ONNX NonMaxSuppression has neither the offset nor the touch test (boxes fed with ``x1 + 1`` would
overlap where OpenVINO's are less than one pixel apart), so the NMS is computed in the plugin's
float32 expressions by the Loop of ``ops/_common/greedy_nms.py`` over the K = min(A * H * W,
pre_nms_count) sorted positions, every image at once, stopping when every image has
post_nms_count boxes (measured, one core, K = 6000, N = 2: 0.15 s with post_nms_count 1000,
0.55 s with 6000), with its CumSum cap at post_nms_count; NonZero over the kept flags, image-major, lists
the output rows.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.greedy_nms import greedy_nms
from ._common.shapes import i64

F32 = np.float32
_RANKS = (("im_info", 2), ("anchors", 4), ("deltas", 4), ("scores", 4))


def _check(layer, inputs):
    a = layer.attrs
    for v, (name, rank) in zip(inputs, _RANKS):
        if v.etype is None or v.etype.name != "f32":
            raise UnsupportedLayer(layer, f"{name} of type {getattr(v.etype, 'name', '?')}: only f32 is supported")
        if v.shape is not None and len(v.shape) != rank:
            raise InvalidLayer(layer, f"{name} must be {rank}D, got {list(v.shape)}")
    info = inputs[0].shape
    if info is not None and isinstance(info[1], int) and info[1] not in (3, 4):
        raise InvalidLayer(layer, f"im_info must be [N, 3] or [N, 4], got {list(info)}")
    if float(a["nms_eta"]) != 1.0:
        raise InvalidLayer(layer, f"nms_eta {a['nms_eta']:g}: OpenVINO accepts only 1 (its validation refuses "
                                  "the spec's adaptive threshold, which its runtime does not implement)")
    if int(a["pre_nms_count"]) <= 0 or int(a["post_nms_count"]) <= 0:
        raise InvalidLayer(layer, f"pre_nms_count {a['pre_nms_count']} and post_nms_count "
                                  f"{a['post_nms_count']} must be positive")


def _decode(g, im_info, anchors, deltas, scores, o, min_size):
    """Boxes [N, P, 4], scores [N, P] and the min_size test (bool [N, P]), proposals (h, w, a)."""
    f32 = lambda v: g.const(F32(v), np.float32)  # noqa: E731
    A = g.Slice(g.Shape(scores), i64(g, [1]), i64(g, [2]))
    d = g.Reshape(g.Transpose(g.Reshape(deltas, g.Concat(i64(g, [0]), A, i64(g, [4, -1]), axis=0)),
                              perm=[0, 3, 1, 2]), i64(g, [0, -1, 4]))  # [N, P, 4]
    s = g.Reshape(g.Transpose(g.Reshape(scores, g.Concat(i64(g, [0]), A, i64(g, [-1]), axis=0)),
                              perm=[0, 2, 1]), i64(g, [0, -1]))  # [N, P]
    an = g.Reshape(anchors, i64(g, [-1, 4]))  # [P, 4]
    col = lambda t, j: g.Gather(t, i64(g, j), axis=-1)  # noqa: E731
    info = lambda j: g.Gather(im_info, j, axis=1)  # noqa: E731  [N, 1]
    last = g.Sub(g.Slice(g.Shape(im_info), i64(g, [1]), i64(g, [2])), i64(g, [1]))
    scale = {0: info(last), 1: info(i64(g, [2]))}  # x: scale_w, y: scale_h
    limit = {0: g.Sub(info(i64(g, [1])), o), 1: g.Sub(info(i64(g, [0])), o)}
    max_log = f32(np.float32(np.log(1000.0 / 16.0)))
    corners, alive = {}, None
    for axis in (0, 1):
        p0, p1 = col(an, axis), col(an, axis + 2)
        ww = g.Add(g.Sub(p1, p0), o)
        pc = g.Add(g.Mul(col(d, axis), ww), g.Add(p0, g.Mul(f32(0.5), ww)))
        half = g.Mul(f32(0.5), g.Mul(g.Exp(g.Min(col(d, axis + 2), max_log)), ww))
        clamp = lambda v: g.Max(f32(0.0), g.Min(v, limit[axis]))  # noqa: E731
        lo, hi = clamp(g.Sub(pc, half)), clamp(g.Sub(g.Add(pc, half), o))
        corners[axis], corners[axis + 2] = lo, hi
        big = g.LessOrEqual(g.Mul(f32(min_size), scale[axis]), g.Add(g.Sub(hi, lo), o))
        alive = big if alive is None else g.And(alive, big)
    boxes = g.Concat(*[g.Unsqueeze(corners[j], i64(g, [-1])) for j in range(4)], axis=-1)
    return boxes, s, alive


@lowers("GenerateProposals", "opset9")
def generate_proposals9(ctx, layer, inputs):
    """GenerateProposals-9 (im_info, anchors, deltas, scores) -> Reshape/Transpose (proposal
    order), Sub/Add/Mul/Min/Exp/Max (decoding, min_size), TopK, GatherND (pre_nms_count),
    Loop (greedy NMS: per position LessOrEqual/Min/Max/Sub/Add/Mul/Div/Less, ReduceSum, Where), CumSum
    (post_nms_count), NonZero, Gather (rows of all images), ReduceSum, Cast (rois_num)."""
    _check(layer, inputs)
    a = layer.attrs
    g = ctx.b
    o = g.const(F32(0.0 if a["normalized"] else 1.0), np.float32)
    boxes, s, alive = _decode(g, *inputs, o, F32(a["min_size"]))
    k = g.Min(g.Slice(g.Shape(s), i64(g, [1]), i64(g, [2])), i64(g, [int(a["pre_nms_count"])]))
    top, idx = g.op("TopK", s, k, axis=1, largest=1, sorted=1, _outputs=2)  # [N, K]
    sboxes = g.GatherND(boxes, g.Unsqueeze(idx, i64(g, [-1])), batch_dims=1)  # [N, K, 4]
    keep0 = g.Cast(g.GatherElements(alive, idx, axis=1), to=TensorProto.FLOAT)
    keep = greedy_nms(g, layer.name, sboxes, keep0, k, o, g.const(F32(a["nms_threshold"]), np.float32),
                      g.const(F32(a["post_nms_count"]), np.float32))
    rows = g.Reshape(g.NonZero(g.Reshape(keep, i64(g, [-1]))), i64(g, [-1]))  # image-major, kept order
    rois = g.Gather(g.Reshape(sboxes, i64(g, [-1, 4])), rows, axis=0)
    out_scores = g.Gather(g.Reshape(top, i64(g, [-1])), rows, axis=0)
    num_type = TensorProto.INT32 if a["roi_num_type"] == "i32" else TensorProto.INT64
    rois_num = g.Cast(g.ReduceSum(keep, i64(g, [1]), keepdims=0), to=num_type)
    return [rois, out_scores, rois_num]
