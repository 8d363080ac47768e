"""The chain of ExperimentalDetectronGenerateProposalsSingleImage-6 (the Detectron RPN of one
image), registered in ops/experimental_detectron.py (its family).

Facts (OpenVINO's operation specification, reference implementation and CPU plugin, in our
words; measured against the oracle):

- Inputs: im_info ``[3]`` (image height, width, scale), anchors ``[H * W * A, 4]`` ordered by
  (h, w, a), deltas ``[A * 4, H, W]`` (dx, dy, dlog w, dlog h of anchor a at channels 4a..4a+3),
  scores ``[A, H, W]``. Proposal i = (h, w, a) in that order.
- Decoding, float32, offset 1: ``ww = x1 - x0 + 1``, ``cx = x0 + 0.5 * ww``, ``pcx = dx * ww +
  cx``, ``pw = exp(min(dlog w, log(1000 / 16))) * ww``; ``x0 = pcx - 0.5 * pw``, ``x1 = pcx + 0.5
  * pw - 1``; each coordinate clamped to ``[0, W_img - 1]`` (y likewise); a box whose ``x1 - x0 +
  1`` or ``y1 - y0 + 1`` is below min_size keeps its place with score 0 (not removed).
- The ``min(N, pre_nms_count)`` highest scores, highest first (equal scores: smaller proposal
  index first here; OpenVINO's partial sort leaves their order open), then greedy NMS in that
  order, the plugin's ``nms_cpu`` with offset 0 (the decoding's offset 1 is not used there): box
  j is dropped when ``nms_threshold < IoU`` with a kept box before it, the IoU being 0 when they
  do not touch (measured: a negative nms_threshold keeps only the first box) and else ``inter /
  (area + area' - inter)``, sizes ``x1 - x0`` signed; at most post_nms_count kept; rows past them zeros.
- ONNX NonMaxSuppression computes the same IoU for ordinary boxes, but it reorders the corners
  of inverted boxes (x1 < x0 after decoding: deltas shrinking a box below 1 pixel, x1 losing the
  offset), which OpenVINO's signed sizes never let overlap anything (measured: two equal inverted
  boxes are both kept, NonMaxSuppression dropped the second). So the NMS is the Loop of
  ``ops/_common/greedy_nms.py`` (offset 0) over the sorted positions.
"""
from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from ..errors import InvalidLayer, UnsupportedLayer
from ._common.greedy_nms import greedy_nms
from ._common.shapes import i64

_ONE = numpy_helper.from_array(np.ones(1, np.float32))


def proposals_chain(ctx, layer, inputs):
    """ExperimentalDetectronGenerateProposalsSingleImage-6 (im_info, anchors, deltas, scores) ->
    Reshape/Transpose (proposal order), Sub/Add/Mul/Min/Exp/Max (decoding), LessOrEqual/Where
    (min_size), TopK (pre_nms_count), Loop (greedy NMS), CumSum, NonZero, Gather, Pad (post_nms_count
    rows)."""
    a = layer.attrs
    for v, name, rank in zip(inputs, ("im_info", "anchors", "deltas", "scores"), (1, 2, 3, 3)):
        if v.etype is None or v.etype.name != "f32":
            raise UnsupportedLayer(layer, f"{name} of type {getattr(v.etype, 'name', '?')}: only f32 is supported")
        if v.shape is not None and len(v.shape) != rank:
            raise InvalidLayer(layer, f"{name} must be {rank}D, got {list(v.shape)}")
    pre, post = int(a["pre_nms_count"]), int(a["post_nms_count"])
    thr, min_size = np.float32(a["nms_threshold"]), np.float32(a["min_size"])
    if pre <= 0 or post <= 0:
        raise InvalidLayer(layer, f"pre_nms_count {pre} and post_nms_count {post} must be positive")
    im_info, anchors, deltas, scores = inputs
    g = ctx.b
    f32 = lambda v: g.const(np.float32(v), np.float32)  # noqa: E731
    A = g.Shape(scores, start=0, end=1) if g.opset >= 15 else g.Slice(g.Shape(scores), i64(g, [0]), i64(g, [1]))
    d = g.Transpose(g.Reshape(deltas, g.Concat(A, i64(g, [4, -1]), axis=0)), perm=[2, 0, 1])  # [HW, A, 4]
    d = g.Reshape(d, i64(g, [-1, 4]))
    s = g.Reshape(g.Transpose(g.Reshape(scores, g.Concat(A, i64(g, [-1]), axis=0)), perm=[1, 0]), i64(g, [-1]))
    col = lambda t, j: g.Gather(t, i64(g, j), axis=1)  # noqa: E731
    info = lambda j: g.Sub(g.Gather(im_info, i64(g, j), axis=0), f32(1.0))  # noqa: E731
    limit = {0: info(1), 1: info(0)}  # x: width - 1, y: height - 1
    max_log = f32(np.float32(np.log(1000.0 / 16.0)))
    lo, hi, size = {}, {}, {}
    for axis in (0, 1):
        p0, p1 = col(anchors, axis), col(anchors, axis + 2)
        ww = g.Add(g.Sub(p1, p0), f32(1.0))
        ctr = g.Add(p0, g.Mul(f32(0.5), ww))
        pc = g.Add(g.Mul(col(d, axis), ww), ctr)
        half = g.Mul(f32(0.5), g.Mul(g.Exp(g.Min(col(d, axis + 2), max_log)), ww))
        clamp = lambda v: g.Max(f32(0.0), g.Min(v, limit[axis]))  # noqa: E731
        lo[axis] = clamp(g.Sub(pc, half))
        hi[axis] = clamp(g.Sub(g.Add(pc, half), f32(1.0)))
        size[axis] = g.Add(g.Sub(hi[axis], lo[axis]), f32(1.0))
    boxes = g.Concat(*[g.Unsqueeze(c, i64(g, [1])) for c in (lo[0], lo[1], hi[0], hi[1])], axis=1)  # [N, 4]
    big = g.And(g.LessOrEqual(f32(min_size), size[0]), g.LessOrEqual(f32(min_size), size[1]))
    s = g.Where(big, s, g.Mul(s, f32(0.0)))
    k = g.Min(g.Shape(s), i64(g, [pre]))
    top, idx = g.op("TopK", s, k, axis=0, largest=1, sorted=1, _outputs=2)
    sorted_boxes = g.Gather(boxes, idx, axis=0)
    ones = g.ConstantOfShape(g.Concat(i64(g, [1]), k, axis=0), value=_ONE)  # [1, K]: all candidates
    flags = greedy_nms(g, layer.name, g.Unsqueeze(sorted_boxes, i64(g, [0])), ones, k, f32(0.0), f32(thr), f32(post))
    keep = g.Reshape(g.NonZero(g.Reshape(flags, i64(g, [-1]))), i64(g, [-1]))  # [M], in kept order
    rois, out_scores = g.Gather(sorted_boxes, keep, axis=0), g.Gather(top, keep, axis=0)
    missing = g.Sub(i64(g, [post]), g.Shape(keep))
    rois = g.Pad(rois, g.Concat(i64(g, [0, 0]), missing, i64(g, [0]), axis=0))
    out_scores = g.Pad(out_scores, g.Concat(i64(g, [0]), missing, axis=0))
    return [rois, out_scores]
