"""Oracle of MatrixNms-8, from the spec text and PaddlePaddle's matrix_nms (the framework that
writes it), box by box.

Per image and class (``background_class`` skipped): candidates are the boxes with
``score > score_threshold``, ordered by descending score (equal scores: smaller box index first;
the spec and the framework leave it open), the first ``nms_top_k`` kept (-1: all). For the
candidate at position i: ``max_iou[i]`` = the largest IoU with an earlier candidate (0 for the
first), ``decay[i]`` = the smallest ``f(iou(i, j), max_iou[j])`` over earlier candidates j (1 for
the first), ``f`` = ``(1 - iou) / (1 - max_iou)`` computed in double (linear) or
``exp((max_iou^2 - iou^2) * gaussian_sigma)`` (gaussian); a NaN IoU or decay takes no part. The
decayed score ``decay * score`` (f32) is kept when ``> post_threshold``. Per image the kept boxes
are sorted by (decayed score desc, class, box); ``keep_top_k`` keeps the first; across batches
``score`` re-sorts all rows by (score desc, image, class, box) and ``classid`` by (class, image,
score desc, box). Rows [class, decayed score, x1, y1, x2, y2], indices ``image * M + box``, the
number of rows per image (an image without detections gives 0 and the next images go on).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer
from .nms_results import index_type, sort_across_batch
from .registry import oracle

F = np.float32


def _area(box, norm: np.float32) -> np.float32:
    x1, y1, x2, y2 = box
    if x2 < x1 or y2 < y1:
        return F(0)
    return F((x2 - x1 + norm) * (y2 - y1 + norm))


def iou(a, b, norm: np.float32) -> np.float32:
    """IoU in f32 of boxes a and b (x1, y1, x2, y2); 0 when they are apart."""
    ax1, ay1, ax2, ay2 = (F(v) for v in a)
    bx1, by1, bx2, by2 = (F(v) for v in b)
    if bx1 > ax2 or bx2 < ax1 or by1 > ay2 or by2 < ay1:
        return F(0)
    w = min(ax2, bx2) - max(ax1, bx1) + norm
    h = min(ay2, by2) - max(ay1, by1) + norm
    inter = F(w * h)
    with np.errstate(all="ignore"):
        return F(inter / (_area((ax1, ay1, ax2, ay2), norm) + _area((bx1, by1, bx2, by2), norm) - inter))


def _decay(value: np.float32, max_iou: np.float32, attrs) -> np.float32:
    if attrs["decay_function"] == "gaussian":
        with np.errstate(all="ignore"):
            power = F((max_iou * max_iou - value * value) * F(attrs["gaussian_sigma"]))
        try:
            return F(math.exp(float(power)))
        except OverflowError:
            return F(np.inf)
    with np.errstate(all="ignore"):  # max_iou 1: +-inf or NaN (which takes no part)
        return F((np.float64(1) - np.float64(value)) / (np.float64(1) - np.float64(max_iou)))


def _one_class(boxes, scores, attrs):
    """Kept (box index, decayed score) of one image and class, in candidate order."""
    score_t, post_t, top = F(attrs["score_threshold"]), F(attrs["post_threshold"]), int(attrs["nms_top_k"])
    norm = F(0) if attrs["normalized"] else F(1)
    cand = sorted((i for i in range(len(scores)) if F(scores[i]) > score_t), key=lambda i: (-F(scores[i]), i))
    if top > -1:
        cand = cand[:top]
    max_iou = []
    for p, i in enumerate(cand):
        m = F(0)
        for j in cand[:p]:
            v = iou(boxes[i], boxes[j], norm)
            if m < v:  # a NaN never wins
                m = v
        max_iou.append(m)
    kept = []
    for p, i in enumerate(cand):
        decay = F(1)
        for q, j in enumerate(cand[:p]):
            d = _decay(iou(boxes[i], boxes[j], norm), max_iou[q], attrs)
            if d < decay:
                decay = d
        ds = F(decay * F(scores[i]))
        if ds > post_t:
            kept.append((i, ds))
    return kept


@oracle("MatrixNms", "opset8")
def matrix_nms(layer, inputs):
    boxes, scores = np.asarray(inputs[0]), np.asarray(inputs[1])
    if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3 or boxes.shape[0] != scores.shape[0] \
            or boxes.shape[1] != scores.shape[2]:
        raise InvalidLayer(layer, f"boxes must be [N, M, 4] and scores [N, C, M], got {boxes.shape}, {scores.shape}")
    a = layer.attrs
    n, c, m = scores.shape
    rows, counts = [], []
    for b in range(n):
        image = [(s, k, i) for k in range(c) if k != int(a["background_class"])
                 for i, s in _one_class(boxes[b], scores[b, k], a)]
        image.sort(key=lambda r: (-r[0], r[1], r[2]))
        if int(a["keep_top_k"]) > -1:
            image = image[:int(a["keep_top_k"])]
        counts.append(len(image))
        rows += [(b, k, i, s) for s, k, i in image]
    sort_across_batch(rows, a)
    itype = index_type(a)
    ftype = layer.outputs[0].etype.numpy if layer.outputs[0].etype is not None else boxes.dtype
    out = np.array([[F(v) for v in (k, s, *boxes[b, i])] for b, k, i, s in rows], F).reshape(-1, 6)
    index = np.array([b * m + i for b, k, i, _ in rows], itype).reshape(-1, 1)
    return [out.astype(ftype), index, np.array(counts, itype)]
