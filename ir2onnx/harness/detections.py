"""The detections rule of ``ir2onnx check``: two backends' detections matched box to box.

Detections are rows, and rows whose scores nearly tie may come out in another order, or one of
two near-equal boxes may be kept by NMS in one backend and its neighbour in the other; an
element-wise comparison calls that a failure. Here, per pair of backends, the rows whose score is
above the score threshold (``--score-threshold``, default :data:`SCORE_THRESHOLD`) are matched
greedily, best score first, to a row of the other backend of the same image and label with
IoU >= :data:`IOU`; a row's partner may score up to the rule's score limit below the threshold
(a row just above it in one backend and just below in the other is no disagreement). The
verdict counts the rows left unmatched on either side and reports the worst matched errors:
the score error (absolute) and the box error (the largest coordinate difference divided by the
larger side of the box). The pair passes when no row is unmatched and both errors are within
the limits (:class:`ir2onnx.harness.rules.Limits`).

Layouts: ``ssd7`` (``[image_id, label, score, x_min, y_min, x_max, y_max]`` rows: DetectionOutput's
``[1, 1, N, 7]`` and ``[N, 7]`` outputs; an image id of -1 ends the list), ``box5``
(``[x_min, y_min, x_max, y_max, score]`` rows, the labels in a separate integer output or none),
``box4`` (boxes, with separate scores and labels outputs), ``yolo`` (a RegionYolo's region maps,
decoded: per cell and anchor, box ``((col + x) / W, (row + y) / H, exp(w) * anchor_w / W, exp(h) *
anchor_h / H)``, label the best class, score objectness times that class's probability; one row
per cell and anchor, no NMS: both backends' rows are decoded alike).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SCORE_THRESHOLD = 0.3
IOU = 0.5


@dataclass
class Rows:
    """Detections as columns: image id, label, score, box (x_min, y_min, x_max, y_max)."""

    image: np.ndarray
    label: np.ndarray
    score: np.ndarray
    box: np.ndarray


def rows(layout: str, boxes: np.ndarray, labels: np.ndarray | None = None,
         scores: np.ndarray | None = None, region: tuple = ()) -> Rows:
    """The detections of one backend's output(s) in ``layout`` (``region``: a RegionYolo's
    ``(coords, classes, anchors per cell, H, W, anchors, do_softmax)``)."""
    boxes = np.asarray(boxes, dtype=np.float64)
    if layout == "yolo":
        return _regions(boxes, *region)
    if layout == "ssd7":
        r = boxes.reshape(-1, 7)
        end = np.nonzero(r[:, 0] == -1)[0]
        r = r[: end[0]] if end.size else r
        return Rows(r[:, 0], r[:, 1], r[:, 2], r[:, 3:7])
    width = 5 if layout == "box5" else 4
    r = boxes.reshape(-1, width)
    n = r.shape[0]
    score = r[:, 4] if layout == "box5" else np.asarray(scores, np.float64).reshape(-1)[:n]
    label = np.zeros(n) if labels is None else np.asarray(labels, np.float64).reshape(-1)[:n]
    if label.shape[0] < n or score.shape[0] < n:  # a labels/scores output shorter than the boxes
        n = min(label.shape[0], score.shape[0])
        r, label, score = r[:n], label[:n], score[:n]
    return Rows(np.zeros(n), label, score, r[:, :4])


def _ordered(b: np.ndarray) -> np.ndarray:
    """Boxes with their corners ordered: DetectionOutput decodes (x_min, y_min, x_max, y_max)
    without swapping, so a location offset can give x_max < x_min; the region is the same."""
    return np.concatenate([np.minimum(b[..., :2], b[..., 2:]), np.maximum(b[..., :2], b[..., 2:])], -1)


def _iou(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    """IoU of ``box`` with each of ``others``; 1 for an equal box of no area (a point or a line)."""
    same = np.all(others == box, axis=-1)
    box, others = _ordered(box), _ordered(others)
    x0 = np.maximum(box[0], others[:, 0])
    y0 = np.maximum(box[1], others[:, 1])
    x1 = np.minimum(box[2], others[:, 2])
    y1 = np.minimum(box[3], others[:, 3])
    inter = np.clip(x1 - x0, 0, None) * np.clip(y1 - y0, 0, None)
    area = lambda b: (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
    union = area(box) + area(others) - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / union, same.astype(np.float64))


@dataclass
class Match:
    """The matching of two backends' detections."""

    above: tuple[int, int]  # rows above the threshold in a, in b
    matched: int
    unmatched: int
    score_error: float  # worst matched |score difference|
    box_error: float  # worst matched coordinate difference / the box's larger side
    worst_iou: float  # lowest IoU of a matched pair (1.0 when none)


def match(a: Rows, b: Rows, threshold: float, score_limit: float) -> Match:
    """Match the rows above ``threshold`` of each side to rows of the other (see the module)."""
    finite = lambda r: np.isfinite(r.score) & np.all(np.isfinite(r.box), axis=1)
    a_top = np.nonzero((a.score > threshold) & finite(a))[0]
    b_top = np.nonzero((b.score > threshold) & finite(b))[0]
    free_a = (a.score > threshold - score_limit) & finite(a)  # rows still free to be a partner
    free_b = (b.score > threshold - score_limit) & finite(b)
    pairs = []

    def pair_up(src: Rows, src_rows, dst: Rows, free_src, free_dst, flip: bool) -> int:
        unmatched = 0
        for i in sorted(src_rows, key=lambda k: -src.score[k]):
            if not free_src[i]:
                continue  # matched already, as the partner of a row of the other side
            cand = np.nonzero(free_dst & (dst.image == src.image[i]) & (dst.label == src.label[i]))[0]
            ious = _iou(src.box[i], dst.box[cand]) if cand.size else np.zeros(0)
            if not cand.size or ious.max() < IOU:
                unmatched += 1
                continue
            k = int(np.argmax(ious))
            j = cand[k]
            free_src[i] = free_dst[j] = False
            pairs.append((j, i, ious[k]) if flip else (i, j, ious[k]))
        return unmatched

    unmatched = pair_up(a, a_top, b, free_a, free_b, False)
    unmatched += pair_up(b, b_top, a, free_b, free_a, True)
    score_error = box_error = 0.0
    worst_iou = 1.0
    for i, j, iou in pairs:
        score_error = max(score_error, abs(a.score[i] - b.score[j]))
        side = max(abs(a.box[i, 2] - a.box[i, 0]), abs(a.box[i, 3] - a.box[i, 1]), 1e-12)
        box_error = max(box_error, float(np.max(np.abs(a.box[i] - b.box[j]))) / side)
        worst_iou = min(worst_iou, float(iou))
    return Match((len(a_top), len(b_top)), len(pairs), unmatched, float(score_error), box_error, worst_iou)


def _regions(maps: np.ndarray, coords: int, classes: int, count: int, h: int, w: int,
             anchors: tuple, softmax: bool) -> Rows:
    """Decode a RegionYolo output (YOLO v2 with ``softmax``: classes already softmaxed; v3: each
    already a logistic) into one row per cell and anchor."""
    r = maps.reshape(-1, count, coords + 1 + classes, h, w)
    n = r.shape[0]
    col = np.arange(w)[None, None, None, :]
    row = np.arange(h)[None, None, :, None]
    anchor = np.asarray(anchors, np.float64).reshape(-1, 2)[:count] if len(anchors) >= 2 * count else np.ones((count, 2))
    cx, cy = (col + r[:, :, 0]) / w, (row + r[:, :, 1]) / h
    with np.errstate(over="ignore"):
        bw = np.exp(np.clip(r[:, :, 2], -50, 50)) * anchor[None, :, 0, None, None] / w
        bh = np.exp(np.clip(r[:, :, 3], -50, 50)) * anchor[None, :, 1, None, None] / h
    prob = r[:, :, coords:coords + 1] * r[:, :, coords + 1:]  # objectness x class probability
    label, score = np.argmax(prob, axis=2), np.max(prob, axis=2)
    box = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], -1)
    image = np.broadcast_to(np.arange(n)[:, None, None, None], label.shape)
    return Rows(image.reshape(-1).astype(np.float64), label.reshape(-1).astype(np.float64), score.reshape(-1),
                box.reshape(-1, 4))
