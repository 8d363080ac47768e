"""Oracles of NonMaxSuppression-5/-9, from the spec text, in plain Python.

NonMaxSuppression, per batch and class (spec steps 1-8): repeatedly take the box with the highest
score (equal scores: the smaller box index; the spec leaves this open), stop when its score is
not above score_threshold (``s > score_threshold`` is kept: the source ONNX model's rule, which
OpenVINO's runtime shares; the spec text says ``>=``), else add it and rescale every remaining
score by ``func(IOU)``: 1 when ``iou <= iou_threshold`` else 0 (removed) for hard NMS, and
``exp(-0.5 * iou^2 / sigma)`` for Soft-NMS (NMS-5 also zeroes ``iou > iou_threshold`` there).
IoU is computed in f32 as ``inter / (area_a + area_b - inter)``; corners in either order; a box of
zero area overlaps nothing (IoU 0). sort_result_descending=true orders all selected rows by
descending score, equal scores keeping the (batch, class, selection) order.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle

F = np.float32


def _corners(box, center: bool):
    """(ymin, xmin, ymax, xmax) in f32."""
    a, b, c, d = (F(v) for v in box)
    if center:  # [x_center, y_center, width, height]
        return b - d / F(2), a - c / F(2), b + d / F(2), a + c / F(2)
    return min(a, c), min(b, d), max(a, c), max(b, d)


def iou(box_a, box_b, center: bool) -> float:
    ya0, xa0, ya1, xa1 = _corners(box_a, center)
    yb0, xb0, yb1, xb1 = _corners(box_b, center)
    area_a = (ya1 - ya0) * (xa1 - xa0)
    area_b = (yb1 - yb0) * (xb1 - xb0)
    if area_a <= 0 or area_b <= 0:
        return 0.0
    inter = max(min(ya1, yb1) - max(ya0, yb0), F(0)) * max(min(xa1, xb1) - max(xa0, xb0), F(0))
    return float(inter / (area_a + area_b - inter))


def _one(inputs, index: int, default, what: str, layer):
    if len(inputs) <= index:
        return default
    values = np.asarray(inputs[index]).reshape(-1)
    if values.size != 1:
        raise InvalidLayer(layer, f"{what} must hold one value, got {values.size}")
    return values[0]


def _select(boxes, scores, limit, iou_t, score_t, sigma, center, hard_cut):
    """Greedy selection for one batch and class: list of (box index, score)."""
    live = {i: F(s) for i, s in enumerate(scores)}
    chosen: list[tuple[int, np.float32]] = []
    while live and len(chosen) < limit:
        best = min(live, key=lambda i: (-live[i], i))
        s = live.pop(best)
        if not s > score_t:
            break
        chosen.append((best, s))
        for i in list(live):
            v = iou(boxes[i], boxes[best], center)
            if sigma == 0 or (hard_cut and v > iou_t):
                if v > iou_t:
                    del live[i]
            else:
                live[i] = F(live[i] * F(math.exp(-0.5 * v * v / sigma)))
    return chosen


@oracle("NonMaxSuppression", "opset1")
@oracle("NonMaxSuppression", "opset3")
@oracle("NonMaxSuppression", "opset4")
def nms_indices_only(layer, inputs):
    """selected_indices of -5's algorithm, then rows of -1 up to the spec's count
    min(num_boxes, max_output_boxes_per_class) * num_batches * num_classes where the IR declares
    that count (none otherwise); NonMaxSuppression-1 gives i64."""
    attrs = dict(layer.attrs)
    attrs.setdefault("output_type", "i64")
    indices = nms(dataclasses.replace(layer, attrs=attrs), inputs)[0]
    boxes, scores = np.asarray(inputs[0]), np.asarray(inputs[1])
    limit = int(_one(inputs, 2, 0, "max_output_boxes_per_class", layer))
    count = min(boxes.shape[1], limit) * boxes.shape[0] * scores.shape[1]
    if not layer.outputs[0].shape or layer.outputs[0].shape[0] != count:
        return [indices]
    return [np.concatenate([indices, np.full((count - len(indices), 3), -1, indices.dtype)])]


@oracle("NonMaxSuppression", "opset5")
@oracle("NonMaxSuppression", "opset9")
def nms(layer, inputs):
    boxes, scores = np.asarray(inputs[0]), np.asarray(inputs[1])
    if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3:
        raise InvalidLayer(layer, f"boxes must be [B, N, 4] and scores [B, C, N], got {boxes.shape}, {scores.shape}")
    if boxes.shape[0] != scores.shape[0] or boxes.shape[1] != scores.shape[2]:
        raise InvalidLayer(layer, f"boxes {boxes.shape} and scores {scores.shape} disagree")
    limit = int(_one(inputs, 2, 0, "max_output_boxes_per_class", layer))
    iou_t = float(F(_one(inputs, 3, 0.0, "iou_threshold", layer)))
    score_t = F(_one(inputs, 4, 0.0, "score_threshold", layer))
    sigma = float(F(_one(inputs, 5, 0.0, "soft_nms_sigma", layer)))
    center = layer.attrs["box_encoding"] == "center"
    hard_cut = layer.version == "opset5"
    rows = []
    for b in range(boxes.shape[0]):
        for c in range(scores.shape[1]):
            for i, s in _select(boxes[b], scores[b, c], limit, iou_t, score_t, sigma, center, hard_cut):
                rows.append((b, c, i, s))
    if layer.attrs["sort_result_descending"]:
        rows = sorted(rows, key=lambda r: -r[3])  # stable: ties keep (batch, class, selection) order
    itype = np.int32 if getattr(layer.attrs["output_type"], "name", layer.attrs["output_type"]) == "i32" else np.int64
    ftype = layer.outputs[1].etype.numpy if len(layer.outputs) > 1 and layer.outputs[1].etype else scores.dtype
    indices = np.array([r[:3] for r in rows], itype).reshape(-1, 3)
    selected = np.array([(r[0], r[1], r[3]) for r in rows], np.float64).reshape(-1, 3)
    # a score goes through f32 (the spec computes in the input precision; f16/bf16 values are exact)
    selected[:, 2] = np.array([F(r[3]) for r in rows], np.float32) if rows else selected[:, 2]
    return [indices, selected.astype(F).astype(ftype), np.array([len(rows)], itype)]
