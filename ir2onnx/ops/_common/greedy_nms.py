"""Greedy NMS as OpenVINO's CPU plugin computes it for its RPN ops (GenerateProposals-9 and the
others whose ``nms_cpu`` has the same form), over boxes already sorted best first.

Box j is dropped when ``nms_threshold < IoU`` with a kept box i < j, the IoU being 0 when the
boxes do not touch (``x0_i <= x1_j``, ``x0_j <= x1_i``, likewise y, fails) and else ``inter /
(area_i + area_j - inter)`` in float32 with the plugin's expressions: sizes ``x1 - x0 + offset``,
``inter = max(0, min(x1) - max(x0) + offset) * max(0, ...)`` (0 / 0 gives NaN: not dropped).
This is the plugin's scalar loop; its AVX2 loop (built for Proposal, measured) also skips boxes
that do not touch, which differs only for a negative threshold, where the scalar loop drops them
(IoU 0): Proposal refuses negative thresholds, the others follow the scalar loop (measured).
ONNX NonMaxSuppression has neither the offset, nor the touch test, nor signed sizes, so
:func:`greedy_nms` builds a Loop over the K sorted positions whose state is the kept flags ``[N,
K]`` of every image; step j computes the IoU of box j with all K boxes (memory N * K, time K * N
per step) and clears j where a kept box before it suppresses it. With a cap ``max_kept`` the Loop
stops once every image has that many kept boxes, and CumSum keeps the first ``max_kept``
(measured, one core: Proposal, pre_nms_topn 6000, post_nms_topn 300, N = 2: 0.05 s, 0.7 s with
a Scan over all positions; 0.9 s when the cap is never reached).

ExperimentalDetectronDetectionOutput-6 (classes as the images) uses it with two options: the
areas it computed (its skipped rois have area 0 although their zero boxes would give 1), and
``empty_is_apart``: its ``JaccardOverlap`` also returns 0 when an intersection side ``min - max +
offset`` is ``<= 0`` (NaN is not), where ``nms_cpu`` goes on with ``max(0, side) = 0``; for
boxes that touch that side is <= 0 only for a box of width or height <= 0, and the two differ
only where ``nms_cpu``'s IoU is then NaN (``0 * inf`` or ``0 / 0``: kept, where 0 drops), i.e.
for a negative threshold (tests/test_experimental_detectron_detection_output.py measures one).

MulticlassNms-8/-9 (image and class as the images) uses it with ``touch_test=False`` and
``flat_is_apart``: its ``intersectionOverUnion`` returns 0 when either area ``(x1 - x0 + offset)
* (y1 - y0 + offset)`` is ``<= 0`` and otherwise divides with no touch test (boxes apart give
``max(0, side) = 0``, NaN where the other side is inf); it drops at ``IoU >= thr``, which is
``thr' < IoU`` with ``thr'`` the next float32 below ``thr``.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from .shapes import i64

F32 = np.float32


def _nms_body(g, scope, boxes_t, cols, area, pos, o, thr, cap, empty_is_apart, touch_test=True,
              flat_is_apart=False, nan_drops=None, latest_only=None):
    """Loop body over the sorted positions j (the iteration number): state keep f32 [N, K]; outer
    values the boxes ``boxes_t`` [K, N, 4], their corners ``cols`` and ``area`` [N, K], ``pos``
    [K] (0..K-1), the offset ``o``, ``thr`` and the cap (or None). Box j is dropped where a kept
    box i < j has an IoU with it (0 when they do not touch, or with ``empty_is_apart`` when a
    side of their intersection is <= 0) above thr. The loop goes on while an image has fewer than
    ``cap`` kept boxes at positions <= j."""
    nodes = []
    n = lambda hint: g.unique(f"{scope}/greedy_nms/{hint}")  # noqa: E731

    def node(op, *ins, **attrs):
        out = n(op.lower())
        nodes.append(helper.make_node(op, list(ins), [out], **attrs))
        return out

    def constant(value):
        out = n("const")
        nodes.append(helper.make_node("Constant", [], [out], value=numpy_helper.from_array(value)))
        return out

    j, cond, keep = n("j"), n("cond"), n("keep")
    bx0, by0, bx1, by1 = (n(h) for h in ("x0_j", "y0_j", "x1_j", "y1_j"))
    box = node("Gather", boxes_t, j, axis=0)  # [N, 4]
    nodes.append(helper.make_node("Split", [box, constant(np.int64([1, 1, 1, 1]))], [bx0, by0, bx1, by1], axis=1))
    x0, y0, x1, y1 = cols  # [N, K]: box i
    zero = constant(F32(0))
    touch = None
    if touch_test:
        touch = node("And", node("And", node("LessOrEqual", x0, bx1), node("LessOrEqual", y0, by1)),
                     node("And", node("LessOrEqual", bx0, x1), node("LessOrEqual", by0, y1)))
    raw = [node("Add", node("Sub", node("Min", hi, bhi), node("Max", lo, blo)), o)
           for lo, hi, blo, bhi in ((x0, x1, bx0, bx1), (y0, y1, by0, by1))]
    inter = node("Mul", *(node("Max", zero, r) for r in raw))
    if empty_is_apart:  # no IoU where a side is <= 0 (a NaN side is not)
        side_ok = node("Not", node("Or", *(node("LessOrEqual", r, zero) for r in raw)))
        touch = side_ok if touch is None else node("And", touch, side_ok)
    area_j = node("Gather", area, node("Unsqueeze", j, constant(np.int64([0]))), axis=1)  # [N, 1]
    if flat_is_apart:  # no IoU where an area is <= 0 (a NaN area is not)
        flat = node("Not", node("Or", node("LessOrEqual", area, zero), node("LessOrEqual", area_j, zero)))
        touch = flat if touch is None else node("And", touch, flat)
    iou = node("Div", inter, node("Sub", node("Add", area, area_j), inter))
    if touch is not None:
        iou = node("Where", touch, iou, zero)
    over = node("Less", thr, iou)
    j1 = lambda: node("Unsqueeze", j, constant(np.int64([0])))  # noqa: E731
    if nan_drops is not None:  # box j flagged: a NaN IoU drops it too
        over = node("Or", over, node("And", node("IsNaN", iou), node("Gather", nan_drops, j1(), axis=1)))
    sup = node("And", over, node("Less", pos, j))  # [N, K]
    if latest_only is not None:  # box j flagged: only the latest kept box before it counts
        before = node("Cast", node("And", node("Cast", keep, to=TensorProto.BOOL), node("Less", pos, j)),
                      to=TensorProto.FLOAT)  # [N, K]: kept before j
        latest = node("ArgMax", before, axis=1, keepdims=1, select_last_index=1)  # (none: K - 1, not < j)
        counts = node("Or", node("Not", node("Gather", latest_only, j1(), axis=1)), node("Equal", pos, latest))
        sup = node("And", sup, counts)
    axis1 = constant(np.int64([1]))
    kept_sup = node("ReduceSum", node("Mul", keep, node("Cast", sup, to=TensorProto.FLOAT)), axis1,
                    keepdims=1)  # [N, 1]: kept boxes suppressing j
    dropped = node("And", node("Greater", kept_sup, zero), node("Equal", pos, j))
    new = node("Where", dropped, zero, keep)
    if cap is None:
        more = node("Identity", cond)
    else:  # an image with fewer than cap kept boxes up to j
        done = node("ReduceSum", node("Mul", new, node("Cast", node("LessOrEqual", pos, j), to=TensorProto.FLOAT)),
                    axis1, keepdims=0)  # [N]
        open_images = node("ReduceSum", node("Cast", node("Less", done, cap), to=TensorProto.FLOAT), keepdims=0)
        more = node("Greater", open_images, zero)
    info = helper.make_tensor_value_info
    inputs = [info(j, TensorProto.INT64, []), info(cond, TensorProto.BOOL, []), info(keep, TensorProto.FLOAT, None)]
    return helper.make_graph(nodes, g.unique(f"{scope}/greedy_nms"), inputs,
                             [info(more, TensorProto.BOOL, []), info(new, TensorProto.FLOAT, None)])


def greedy_nms(g, scope: str, boxes: str, keep0: str, count: str, offset: str, threshold: str,
               max_kept: str | None = None, area: str | None = None, empty_is_apart: bool = False,
               touch_test: bool = True, flat_is_apart: bool = False, nan_drops: str | None = None,
               latest_only: str | None = None) -> str:
    """The kept flags f32 ``[N, K]`` (1 kept, 0 dropped) of ``boxes`` f32 ``[N, K, 4]`` (x0, y0,
    x1, y1, each image's boxes sorted best first). ``keep0`` f32 [N, K]: 1 for the candidates (a
    0 box neither is kept nor suppresses); ``count`` int64 [1]: K; ``offset`` and ``threshold``
    f32 scalars; ``max_kept`` (f32 scalar or None): at most that many kept per image, the first
    ones (the Loop stops once every image has them). ``area`` f32 [N, K] (None: ``(x1 - x0 +
    offset) * (y1 - y0 + offset)``) and ``empty_is_apart`` as in the module's docstring;
    ``touch_test=False`` leaves out the touch test, ``flat_is_apart`` makes the IoU 0 where either
    area is ``<= 0`` (MulticlassNms); ``nan_drops`` and ``latest_only`` (bool [N, K] or None): box
    j flagged is also dropped by a NaN IoU, resp. compared with the latest kept box before it only
    (MulticlassNms's nms_eta loop). ``scope`` prefixes the names of the body."""
    cols = [g.Gather(boxes, i64(g, c), axis=-1) for c in range(4)]  # [N, K] each
    if area is None:
        area = g.Mul(g.Add(g.Sub(cols[2], cols[0]), offset), g.Add(g.Sub(cols[3], cols[1]), offset))
    k = g.Squeeze(count, i64(g, [0]))
    pos = g.Range(i64(g, 0), k, i64(g, 1))
    body = _nms_body(g, scope, g.Transpose(boxes, perm=[1, 0, 2]), cols, area, pos, offset, threshold, max_kept,
                     empty_is_apart, touch_test, flat_is_apart, nan_drops, latest_only)
    keep = g.op("Loop", k, g.const(True, np.bool_), keep0, _outputs=1, body=body)
    if max_kept is None:
        return keep
    total = g.CumSum(keep, i64(g, 1))
    return g.Mul(keep, g.Cast(g.LessOrEqual(total, max_kept), to=TensorProto.FLOAT))
