"""Oracle of Proposal-1/-4, in plain Python loops over images, cells, anchors and boxes.

From the spec (anchors from base_size, ratios and scales; deltas applied to anchors on the
feat_stride grid; min_size; the pre_nms_topn best; NMS at nms_thresh; post_nms_topn rows of
``[image, x0, y0, x1, y1]``, the -1 row after the last) and, where it is silent, the facts of
OpenVINO's runtime documented in ``ops/proposal.py``: Caffe's +1 sizes and rounded anchor sides,
TensorFlow's shifted anchors, swapped grid and image sizes and initial clamp, scores of small boxes
multiplied by 0, equal scores in proposal order, IoU 0 for boxes that do not touch. Arithmetic in
f32, one operation at a time.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedLayer
from .registry import oracle

F = np.float32


def _anchor_boxes(a):
    tf = a["framework"] == "tensorflow"
    off = F(0 if tf else 1)
    base = a["base_size"]
    boxes = []
    for r in a["ratio"]:
        r = F(r)
        side = F(math.sqrt(F(F(base * base) / r)))
        if tf:
            w, h = side, F(side * r)
        else:
            w = F(math.floor(float(side) + 0.5))  # positive: roundf
            h = F(math.floor(float(F(w * r)) + 0.5))
        for s in a["scale"]:
            s = F(s)
            center = F(F(0.5) * F(F(base) - off))
            hx, hy = F(F(0.5) * F(F(w * s) - off)), F(F(0.5) * F(F(h * s) - off))
            box = [F(center - hx), F(center - hy), F(center + hx), F(center + hy)]
            if tf:
                box = [F(v - F(F(base) * F(0.5))) for v in box]
            boxes.append(box)
    return boxes


def _iou(p, q, off):
    if not (p[0] <= q[2] and p[1] <= q[3] and q[0] <= p[2] and q[1] <= p[3]):
        return F(0)
    w = max(F(0), F(F(min(p[2], q[2]) - max(p[0], q[0])) + off))
    h = max(F(0), F(F(min(p[3], q[3]) - max(p[1], q[1])) + off))
    inter = F(w * h)
    area_p = F(F(F(p[2] - p[0]) + off) * F(F(p[3] - p[1]) + off))
    area_q = F(F(F(q[2] - q[0]) + off) * F(F(q[3] - q[1]) + off))
    return F(inter / F(F(area_p + area_q) - inter))


def _image(a, scores, deltas, img_h, img_w, min_w, min_h):
    """(boxes, score) of every proposal of one image, in (h, w, anchor) order."""
    tf = a["framework"] == "tensorflow"
    off = F(0 if tf else 1)
    anchors = _anchor_boxes(a)
    k, (height, width) = len(anchors), scores.shape[1:]
    out = []
    for h in range(height):
        for w in range(width):
            x, y = F((h if tf else w) * a["feat_stride"]), F((w if tf else h) * a["feat_stride"])
            for j, anc in enumerate(anchors):
                x0, y0, x1, y1 = F(x + anc[0]), F(y + anc[1]), F(x + anc[2]), F(y + anc[3])
                if tf:
                    x0, x1 = (max(F(0), min(v, img_w)) for v in (x0, x1))
                    y0, y1 = (max(F(0), min(v, img_h)) for v in (y0, y1))
                ww, hh = F(F(x1 - x0) + off), F(F(y1 - y0) + off)
                cx, cy = F(x0 + F(F(0.5) * ww)), F(y0 + F(F(0.5) * hh))
                dx, dy, dw, dh = (deltas[4 * j + c, h, w] for c in range(4))
                dx, dy = F(dx / F(a["box_coordinate_scale"])), F(dy / F(a["box_coordinate_scale"]))
                dw, dh = F(dw / F(a["box_size_scale"])), F(dh / F(a["box_size_scale"]))
                px, py = F(F(dx * ww) + cx), F(F(dy * hh) + cy)
                pw, ph = F(F(np.exp(dw)) * ww), F(F(np.exp(dh)) * hh)
                box = [F(px - F(F(0.5) * pw)), F(py - F(F(0.5) * ph)), F(px + F(F(0.5) * pw)), F(py + F(F(0.5) * ph))]
                if a["clip_before_nms"]:
                    lim = [F(img_w - off), F(img_h - off)] * 2
                    box = [max(F(0), min(v, lim[i])) for i, v in enumerate(box)]
                big = F(min_w <= F(F(box[2] - box[0]) + off)) * F(min_h <= F(F(box[3] - box[1]) + off))
                out.append((box, F(big * scores[k + j, h, w])))
    return out


@oracle("Proposal", "opset1")
@oracle("Proposal", "opset4")
def proposal(layer, inputs):
    a = layer.attrs
    if a["framework"] not in ("", "tensorflow"):
        raise UnsupportedLayer(layer, f"framework {a['framework']!r}")
    cls, deltas, info = (np.asarray(x, dtype=F) for x in inputs)
    tf = a["framework"] == "tensorflow"
    off = F(0 if tf else 1)
    img_h, img_w = (info[1], info[0]) if tf else (info[0], info[1])
    scale_h, scale_w = info[2], info[3] if info.shape[0] == 4 else info[2]
    min_h, min_w = F(F(a["min_size"]) * scale_h), F(F(a["min_size"]) * scale_w)
    post = a["post_nms_topn"]
    rois = np.zeros((cls.shape[0] * post, 5), F)
    probs = np.zeros(cls.shape[0] * post, F)
    for n in range(cls.shape[0]):
        props = _image(a, cls[n], deltas[n], img_h, img_w, min_w, min_h)
        order = sorted(range(len(props)), key=lambda i: (-props[i][1], i))[:a["pre_nms_topn"]]
        dead, kept = [False] * len(order), []
        for i, pi in enumerate(order):
            if dead[i]:
                continue
            kept.append(pi)
            if len(kept) == post:
                break
            for j in range(i + 1, len(order)):
                if F(a["nms_thresh"]) < _iou(props[pi][0], props[order[j]][0], off):
                    dead[j] = True
        limits = [img_w, img_h, img_w, img_h]
        for r, pi in enumerate(kept):
            box = list(props[pi][0])
            if a["clip_after_nms"]:
                box = [max(F(0), min(v, limits[i])) for i, v in enumerate(box)]
            if a["normalize"]:
                box = [F(v / limits[i]) for i, v in enumerate(box)]
            rois[n * post + r] = [n, *box]
            probs[n * post + r] = props[pi][1]
        if len(kept) < post:
            rois[n * post + len(kept), 0] = -1
    return [rois] if layer.version == "opset1" else [rois, probs]
