"""Oracle of MulticlassNms-8/-9 (shared boxes, and -9's roisnum form), from the spec text.

Per image and class (``background_class`` skipped): candidates are the boxes with
``score >= score_threshold``, ordered by descending score (equal scores: smaller box index),
the first ``nms_top_k`` kept (-1: all); a candidate is kept unless its IoU with an already kept
box is ``>= iou_threshold`` (the adaptive threshold: multiplied by nms_eta after each kept box
while it is above 0.5 and eta < 1). IoU in f32 with +1 on widths/heights when not normalized;
a box of non-positive area overlaps nothing. Per image the kept boxes are sorted by (score desc,
class, box); ``keep_top_k`` keeps the first; ``classid`` re-sorts them by (class, score desc,
box). Across batches ``score`` sorts all rows by (score desc, image, class, box) and
``classid`` by (class, image, score desc, box). Rows [class, score, x1, y1, x2, y2], indices
``image * M + box``, the number of rows per image.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle

F = np.float32


def iou(a, b, norm: np.float32) -> np.float32:
    ax1, ay1, ax2, ay2 = (F(v) for v in a)
    bx1, by1, bx2, by2 = (F(v) for v in b)
    area_a = (ay2 - ay1 + norm) * (ax2 - ax1 + norm)
    area_b = (by2 - by1 + norm) * (bx2 - bx1 + norm)
    if area_a <= 0 or area_b <= 0:
        return F(0)
    h = max(min(ay2, by2) - max(ay1, by1) + norm, F(0))
    w = max(min(ax2, bx2) - max(ax1, bx1) + norm, F(0))
    inter = h * w
    return F(inter / (area_a + area_b - inter))


def _one_class(boxes, scores, attrs):
    """Kept (box index, score) of one image and class, in keeping order."""
    score_t, thr = F(attrs["score_threshold"]), F(attrs["iou_threshold"])
    eta, top = F(attrs["nms_eta"]), int(attrs["nms_top_k"])
    norm = F(0) if attrs["normalized"] else F(1)
    cand = sorted((i for i in range(len(scores)) if F(scores[i]) >= score_t), key=lambda i: (-F(scores[i]), i))
    if top > -1:
        cand = cand[:top]
    kept: list[int] = []
    for i in cand:
        if all(iou(boxes[i], boxes[j], norm) < thr for j in kept):
            kept.append(i)
            if eta < 1 and thr > 0.5:
                thr = F(thr * eta)
    return [(i, F(scores[i])) for i in kept]


@oracle("MulticlassNms", "opset8")
@oracle("MulticlassNms", "opset9")
def multiclass_nms(layer, inputs):
    boxes, scores = np.asarray(inputs[0]), np.asarray(inputs[1])
    if len(inputs) > 2:
        return _per_class_boxes(layer, boxes, scores, np.asarray(inputs[2]).reshape(-1))
    if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3 or boxes.shape[0] != scores.shape[0] \
            or boxes.shape[1] != scores.shape[2]:
        raise InvalidLayer(layer, f"boxes must be [N, M, 4] and scores [N, C, M], got {boxes.shape}, {scores.shape}")
    n, c, m = scores.shape
    return _emit(layer, lambda b, k: (boxes[b], scores[b, k]), n, c, lambda b, k, i: b * m + i, boxes.dtype)


def _per_class_boxes(layer, boxes, scores, roisnum):
    """The roisnum form: boxes [C, S, 4], scores [C, S]; image b holds the next roisnum[b] boxes
    (a non-positive count: none); indices are (position in S) * C + class."""
    if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 2 or boxes.shape[:2] != scores.shape:
        raise InvalidLayer(layer, f"boxes must be [C, S, 4] and scores [C, S], got {boxes.shape}, {scores.shape}")
    counts = [max(int(r), 0) for r in roisnum]
    starts = [sum(counts[:b]) for b in range(len(counts))]
    c = scores.shape[0]

    def image(b, k):
        return boxes[k, starts[b]:starts[b] + counts[b]], scores[k, starts[b]:starts[b] + counts[b]]
    return _emit(layer, image, len(counts), c, lambda b, k, i: (starts[b] + i) * c + k, boxes.dtype)


def _emit(layer, image_class, n, c, flat, dtype):
    """Rows, indices (``flat(image, class, box)``) and counts from the per-class selections."""
    a = layer.attrs
    rows, counts = [], []
    for b in range(n):
        image = [(s, k, i) for k in range(c) if k != int(a["background_class"])
                 for i, s in _one_class(*image_class(b, k), a)]
        image.sort(key=lambda r: (-r[0], r[1], r[2]))
        if int(a["keep_top_k"]) > -1:
            image = image[:int(a["keep_top_k"])]
        if a["sort_result_type"] == "classid":
            image.sort(key=lambda r: (r[1], -r[0], r[2]))
        counts.append(len(image))
        rows += [(b, k, i, s) for s, k, i in image]
    if a["sort_result_across_batch"] and a["sort_result_type"] == "score":
        rows.sort(key=lambda r: (-r[3], r[0], r[1], r[2]))
    elif a["sort_result_across_batch"] and a["sort_result_type"] == "classid":
        rows.sort(key=lambda r: (r[1], r[0], -r[3], r[2]))
    itype = np.int32 if getattr(a["output_type"], "name", a["output_type"]) == "i32" else np.int64
    ftype = layer.outputs[0].etype.numpy if layer.outputs[0].etype is not None else dtype
    out = np.array([[F(v) for v in (k, s, *image_class(b, k)[0][i])] for b, k, i, s in rows], F).reshape(-1, 6)
    index = np.array([flat(b, k, i) for b, k, i, _ in rows], itype).reshape(-1, 1)
    return [out.astype(ftype), index, np.array(counts, itype)]
