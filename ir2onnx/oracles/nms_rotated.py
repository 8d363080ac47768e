"""Oracle of NMSRotated-13, from the spec text, in plain Python and float64 geometry.

A box is ``[x_ctr, y_ctr, width, height, angle]`` (radians): the rectangle ``(+-w/2, +-h/2)``
turned by ``angle`` about its centre, by the matrix ``[[cos, -sin], [sin, cos]]`` acting on
``(x, y)`` with ``clockwise=true`` (clockwise on an image whose y axis points down) and by
``-angle`` with ``clockwise=false``. IoU is the area of the intersection of the two rectangles
over ``w1*h1 + w2*h2 - intersection``; a box whose ``w*h`` (in f32) is not positive overlaps
nothing (IoU 0). The intersection here is Sutherland–Hodgman clipping of one rectangle by the
four half-planes of the other, then the shoelace formula, all in float64.

Per batch and class (greedy hard NMS, NonMaxSuppression-9's rules): candidates are the boxes
with ``score > score_threshold``, by descending score, equal scores by the smaller box index; a
candidate is selected unless its IoU with a box already selected in that class is
``> iou_threshold``; at most max_output_boxes_per_class per class. Rows are (batch, class,
selection order); sort_result_descending=true orders all rows by descending score, equal scores
keeping that order. No padding: K rows, valid_outputs = K.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle

F = np.float32


def corners(box, clockwise: bool = True) -> list[tuple[float, float]]:
    """The rectangle's corners, counter-clockwise in (x, y) with y up (float64)."""
    x, y, w, h, a = (float(v) for v in box)
    t = a if clockwise else -a
    c, s = math.cos(t), math.sin(t)
    pts = [(x + c * u - s * v, y + s * u + c * v)
           for u, v in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2))]
    return pts if _signed_area(pts) >= 0 else pts[::-1]  # a negative w or h mirrors the order


def _signed_area(pts) -> float:
    return 0.5 * sum(pts[i - 1][0] * pts[i][1] - pts[i][0] * pts[i - 1][1] for i in range(len(pts)))


def _clip(subject, a, b):
    """The part of polygon ``subject`` left of (or on) the directed line a -> b."""
    def side(p):
        return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])

    out = []
    for i, cur in enumerate(subject):
        prev = subject[i - 1]
        sc, sp = side(cur), side(prev)
        if sc >= 0:
            if sp < 0:
                out.append(_cross_point(prev, cur, sp, sc))
            out.append(cur)
        elif sp >= 0:
            out.append(_cross_point(prev, cur, sp, sc))
    return out


def _cross_point(p, q, sp, sq):
    t = sp / (sp - sq)
    return (p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1]))


def intersection(box_a, box_b, clockwise: bool = True) -> float:
    poly = corners(box_a, clockwise)
    clip = corners(box_b, clockwise)
    for i in range(4):
        poly = _clip(poly, clip[i], clip[(i + 1) % 4])
        if not poly:
            return 0.0
    return abs(_signed_area(poly))


def iou(box_a, box_b, clockwise: bool = True) -> float:
    """Rotated IoU in float64 (0 when either box's f32 ``w*h`` is not positive)."""
    area_a, area_b = F(box_a[2]) * F(box_a[3]), F(box_b[2]) * F(box_b[3])
    if not (area_a > 0 and area_b > 0):
        return 0.0
    inter = intersection(box_a, box_b, clockwise)
    return inter / (float(area_a) + float(area_b) - inter)


def _one(value, what, layer):
    values = np.asarray(value).reshape(-1)
    if values.size != 1:
        raise InvalidLayer(layer, f"{what} must hold one value, got {values.size}")
    return values[0]


def _select(boxes, scores, limit, iou_t, score_t, clockwise):
    """Greedy selection for one batch and class: list of (box index, score)."""
    order = sorted((i for i in range(len(scores)) if F(scores[i]) > score_t), key=lambda i: (-F(scores[i]), i))
    chosen: list[int] = []
    for i in order:
        if len(chosen) >= limit:
            break
        if all(not iou(boxes[i], boxes[j], clockwise) > iou_t for j in chosen):
            chosen.append(i)
    return [(i, F(scores[i])) for i in chosen]


@oracle("NMSRotated", "opset13")
def nms_rotated(layer, inputs):
    boxes, scores = np.asarray(inputs[0]), np.asarray(inputs[1])
    if boxes.ndim != 3 or boxes.shape[2] != 5 or scores.ndim != 3:
        raise InvalidLayer(layer, f"boxes must be [B, N, 5] and scores [B, C, N], got {boxes.shape}, {scores.shape}")
    if boxes.shape[0] != scores.shape[0] or boxes.shape[1] != scores.shape[2]:
        raise InvalidLayer(layer, f"boxes {boxes.shape} and scores {scores.shape} disagree")
    limit = max(int(_one(inputs[2], "max_output_boxes_per_class", layer)), 0)
    iou_t = float(F(_one(inputs[3], "iou_threshold", layer)))
    score_t = F(_one(inputs[4], "score_threshold", layer))
    clockwise = bool(layer.attrs["clockwise"])
    rows = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            for i, s in _select(boxes[b], scores[b, c], limit, iou_t, score_t, clockwise):
                rows.append((b, c, i, s))
    if layer.attrs["sort_result_descending"]:
        rows = sorted(rows, key=lambda r: -r[3])  # stable: ties keep (batch, class, selection) order
    itype = np.int32 if getattr(layer.attrs["output_type"], "name", layer.attrs["output_type"]) == "i32" else np.int64
    ftype = layer.outputs[1].etype.numpy if layer.outputs[1].etype is not None else scores.dtype
    indices = np.array([r[:3] for r in rows], itype).reshape(-1, 3)
    selected = np.array([(r[0], r[1], r[3]) for r in rows], np.float32).reshape(-1, 3)
    return [indices, selected.astype(ftype), np.array([len(rows)], itype)]
