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
:func:`greedy_nms` builds a Scan over the K sorted positions whose state is the kept flags ``[N,
K]`` of every image; step j computes the IoU of box j with all K boxes (memory N * K, time K * K *
N) and clears j where a kept box before it suppresses it. A cap keeps the first ``max_kept`` kept
boxes (CumSum).
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from .shapes import i64

F32 = np.float32


def _nms_body(g, scope, cols, area, pos, o, thr):
    """Scan body over the sorted positions j: state keep f32 [N, K]; scan inputs box j [N, 4] of
    every image and j (int64 scalar); outer values the corners ``cols`` and ``area`` [N, K] of all
    boxes, ``pos`` [K] (0..K-1), the offset ``o`` and ``thr``. Box j is dropped where a kept box
    i < j has an IoU with it (0 when they do not touch) above thr."""
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

    keep, box, j = n("keep"), n("box_j"), n("j")
    bx0, by0, bx1, by1 = (n(h) for h in ("x0_j", "y0_j", "x1_j", "y1_j"))
    nodes.append(helper.make_node("Split", [box, constant(np.int64([1, 1, 1, 1]))], [bx0, by0, bx1, by1], axis=1))
    x0, y0, x1, y1 = cols  # [N, K]: box i
    zero = constant(F32(0))
    touch = node("And", node("And", node("LessOrEqual", x0, bx1), node("LessOrEqual", y0, by1)),
                 node("And", node("LessOrEqual", bx0, x1), node("LessOrEqual", by0, y1)))
    side = [node("Max", zero, node("Add", node("Sub", node("Min", hi, bhi), node("Max", lo, blo)), o))
            for lo, hi, blo, bhi in ((x0, x1, bx0, bx1), (y0, y1, by0, by1))]
    inter = node("Mul", *side)
    area_j = node("Mul", node("Add", node("Sub", bx1, bx0), o), node("Add", node("Sub", by1, by0), o))
    iou = node("Where", touch, node("Div", inter, node("Sub", node("Add", area, area_j), inter)), zero)
    sup = node("And", node("Less", thr, iou), node("Less", pos, j))  # [N, K]
    kept_sup = node("ReduceSum", node("Mul", keep, node("Cast", sup, to=TensorProto.FLOAT)),
                    constant(np.int64([1])), keepdims=1)  # [N, 1]: kept boxes suppressing j
    dropped = node("And", node("Greater", kept_sup, zero), node("Equal", pos, j))
    new = node("Where", dropped, zero, keep)
    info = helper.make_tensor_value_info
    inputs = [info(keep, TensorProto.FLOAT, None), info(box, TensorProto.FLOAT, None),
              info(j, TensorProto.INT64, None)]
    return helper.make_graph(nodes, g.unique(f"{scope}/greedy_nms"), inputs,
                             [info(new, TensorProto.FLOAT, None)])


def greedy_nms(g, scope: str, boxes: str, keep0: str, count: str, offset: str, threshold: str,
               max_kept: str | None = None) -> str:
    """The kept flags f32 ``[N, K]`` (1 kept, 0 dropped) of ``boxes`` f32 ``[N, K, 4]`` (x0, y0,
    x1, y1, each image's boxes sorted best first). ``keep0`` f32 [N, K]: 1 for the candidates (a
    0 box neither is kept nor suppresses); ``count`` int64 [1]: K; ``offset`` and ``threshold``
    f32 scalars; ``max_kept`` (f32 scalar or None): at most that many kept per image, the first
    ones. ``scope`` prefixes the names of the Scan body."""
    cols = [g.Gather(boxes, i64(g, c), axis=-1) for c in range(4)]  # [N, K] each
    area = g.Mul(g.Add(g.Sub(cols[2], cols[0]), offset), g.Add(g.Sub(cols[3], cols[1]), offset))
    pos = g.Range(i64(g, 0), g.Squeeze(count, i64(g, [0])), i64(g, 1))
    body = _nms_body(g, scope, cols, area, pos, offset, threshold)
    keep = g.op("Scan", keep0, g.Transpose(boxes, perm=[1, 0, 2]), pos, _outputs=1, body=body, num_scan_inputs=2)
    if max_kept is None:
        return keep
    total = g.CumSum(keep, i64(g, 1))
    return g.Mul(keep, g.Cast(g.LessOrEqual(total, max_kept), to=TensorProto.FLOAT))
