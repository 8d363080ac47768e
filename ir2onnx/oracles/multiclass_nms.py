"""Oracle of MulticlassNms-8/-9 (shared boxes, and -9's roisnum form), from the spec text and,
where they differ, OpenVINO's CPU plugin (measured).

Per image and class (``background_class`` skipped): candidates are the boxes with
``score >= score_threshold``, ordered by descending score (equal scores: smaller box index),
the first ``nms_top_k`` kept (-1: all); a candidate is kept unless its IoU with an already kept
box is ``>= iou_threshold`` (a NaN IoU drops nothing); 0 <= nms_eta < 1: the plugin's other
loop (``_eta_loop``: an adaptive threshold, and early stops). IoU in f32 with +1 on widths and
heights when not normalized; a box of non-positive area overlaps nothing. Per image the kept boxes are sorted by (score desc,
class, box); ``keep_top_k`` keeps the first; ``classid`` re-sorts them by (class, score desc,
box). Across batches ``score`` sorts all rows by (score desc, image, class, box) and
``classid`` by (class, image, score desc, box). Rows [class, score, x1, y1, x2, y2], indices
``image * M + box``, the number of rows per image.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .nms_results import index_type, sort_across_batch
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
    with np.errstate(invalid="ignore"):  # inf - inf: NaN
        return F(inter / (area_a + area_b - inter))


def _one_class(boxes, scores, attrs):
    """Kept (box index, score) of one image and class, in keeping order."""
    score_t, thr = F(attrs["score_threshold"]), F(attrs["iou_threshold"])
    eta, top = F(attrs["nms_eta"]), int(attrs["nms_top_k"])
    norm = F(0) if attrs["normalized"] else F(1)
    cand = sorted((i for i in range(len(scores)) if F(scores[i]) >= score_t), key=lambda i: (-F(scores[i]), i))
    if 0 <= eta < 1:
        return _eta_loop(boxes, [(F(scores[i]), i) for i in cand], attrs, norm, eta, top)
    if top > -1:
        cand = cand[:top]
    kept: list[int] = []
    for i in cand:  # a NaN IoU drops nothing
        if not any(iou(boxes[i], boxes[j], norm) >= thr for j in kept):
            kept.append(i)
    return [(i, F(scores[i])) for i in kept]


def _eta_loop(boxes, queue, attrs, norm, eta, top):
    """OpenVINO's loop for 0 <= nms_eta < 1: the best (score, -index) popped at most
    min(nms_top_k, candidates) times; its score is multiplied by 0 by an IoU that is not
    ``<= threshold``; the kept boxes are compared latest first (those kept since it was queued),
    stopping at an IoU ``>= threshold`` (dropped) or once its score is ``<= score_threshold``;
    a box not dropped is kept if its score did not change, else queued again if it is still above
    score_threshold; the threshold times eta after each box not dropped while it is above 0.5."""
    score_t, thr = F(attrs["score_threshold"]), F(attrs["iou_threshold"])
    queue = [(s, i, 0) for s, i in queue]
    pops = len(queue) if top < 0 else min(top, len(queue))
    kept: list[tuple[int, np.float32]] = []
    while pops and queue:
        best = min(range(len(queue)), key=lambda q: (-queue[q][0], queue[q][1]))
        orig, i, begin = queue.pop(best)
        pops -= 1
        score, selected = orig, True
        for k in range(len(kept) - 1, begin - 1, -1):
            v = iou(boxes[i], boxes[kept[k][0]], norm)
            score = F(score * (F(1) if v <= thr else F(0)))
            if v >= thr:
                selected = False
                break
            if score <= score_t:
                break
        if selected:
            if thr > 0.5:
                thr = F(thr * eta)
            if score == orig:
                kept.append((i, score))
            elif score > score_t:
                queue.append((score, i, len(kept)))
    return kept


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
    sort_across_batch(rows, a)
    itype = index_type(a)
    ftype = layer.outputs[0].etype.numpy if layer.outputs[0].etype is not None else dtype
    out = np.array([[F(v) for v in (k, s, *image_class(b, k)[0][i])] for b, k, i, s in rows], F).reshape(-1, 6)
    index = np.array([flat(b, k, i) for b, k, i, _ in rows], itype).reshape(-1, 1)
    return [out.astype(ftype), index, np.array(counts, itype)]
