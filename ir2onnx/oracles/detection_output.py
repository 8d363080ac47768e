"""Oracle of DetectionOutput-1/-8, in plain Python loops over images, classes and priors.

From the spec (inputs, attributes, the 7-value rows and the -1 end row) and, where the spec is
silent, the facts of OpenVINO's runtime (documented in ``ops/detection_output.py``): scores strictly
above confidence_threshold (MXNet style: at or above), top_k best per class before NMS (MXNet:
per image), suppression at IoU strictly above nms_threshold (no ``+ 1`` in the sizes, also not
normalized), inverted boxes overlap nothing, keep_top_k across classes by (score desc, prior asc,
class asc), rows grouped by image then class, a -1 row after the last detection and zeros after
it. Arithmetic in f32, one operation at a time.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .registry import oracle

F = np.float32


def _decode(prior, var, loc, a):
    """One box [xmin, ymin, xmax, ymax] from a prior (already normalized), variances or None and loc."""
    v = var if var is not None else [None] * 4
    d = [loc[j] if v[j] is None else F(v[j] * loc[j]) for j in range(4)]
    if a["code_type"] == "caffe.PriorBoxParameter.CORNER":
        box = [F(prior[j] + d[j]) for j in range(4)]
    else:
        box = [F(0)] * 4
        for j in range(2):
            size = F(prior[j + 2] - prior[j])
            center = F(F(prior[j] + prior[j + 2]) / F(2))
            c = F(F(d[j] * size) + center)
            half = F(F(F(math.exp(d[j + 2])) * size) / F(2))
            box[j], box[j + 2] = F(c - half), F(c + half)
    if a["clip_before_nms"]:
        box = [F(min(max(x, F(0)), F(1))) for x in box]
    return box


def _iou(b1, b2):
    w = F(min(b1[2], b2[2]) - max(b1[0], b2[0]))
    h = F(min(b1[3], b2[3]) - max(b1[1], b2[1]))
    if not (w > 0 and h > 0):
        return F(0)  # also every inverted box: its own width or height is negative
    inter = F(w * h)
    s1 = F(F(b1[2] - b1[0]) * F(b1[3] - b1[1]))
    s2 = F(F(b2[2] - b2[0]) * F(b2[3] - b2[1]))
    with np.errstate(invalid="ignore"):  # infinite boxes: inf - inf, a NaN IoU that suppresses nothing
        return F(inter / F(F(s1 + s2) - inter))


def _greedy(order, boxes, thr):
    thr = F(thr)  # the attribute is an f32
    kept = []
    for i in order:
        if all(not _iou(boxes[i], boxes[k]) > thr for k in kept):
            kept.append(i)
    return kept


def _image(a, conf, boxes, count, c, num_loc):
    """{class: [prior, ...]} of one image from its scores [P][C] and boxes [L][P]."""
    p = len(conf)
    top, thr, bg = a["top_k"], F(a["confidence_threshold"]), a["background_label_id"]
    picked: dict[int, list[int]] = {}
    if not a["decrease_label_id"]:
        for cl in range(c):
            if cl == bg:
                continue
            cand = sorted((q for q in range(count) if conf[q][cl] > thr), key=lambda q: (-conf[q][cl], q))
            if top > -1:
                cand = cand[:top]
            picked[cl] = _greedy(cand, boxes[0 if num_loc == 1 else cl], a["nms_threshold"])
    else:
        cand = []
        for q in range(count):
            best, best_c = F(-1), 0
            for cl in range(1, c):
                if conf[q][cl] >= thr and conf[q][cl] > best:
                    best, best_c = conf[q][cl], cl
            if best_c > 0:
                cand.append((best_c, q))
        cand.sort(key=lambda t: (-conf[t[1]][t[0]], t[0] * p + t[1]))
        if top > -1:
            cand = cand[:top]
        for cl in range(1, c):
            mine = [q for k, q in cand if k == cl]
            picked[cl] = _greedy(mine, boxes[0 if num_loc == 1 else cl], a["nms_threshold"])
    keep = a["keep_top_k"][0]
    dets = [(conf[q][cl], q, cl) for cl, qs in picked.items() for q in qs]
    if keep > -1 and len(dets) > keep:
        best = sorted(dets, key=lambda t: (-t[0], t[1], t[2]))[:keep]
        picked = {cl: [q for s, q, k in best if k == cl] for cl in picked}
    return picked


@oracle("DetectionOutput", "opset1")
@oracle("DetectionOutput", "opset8")
def detection_output(layer, inputs):
    a = layer.attrs
    if a["code_type"] not in ("caffe.PriorBoxParameter.CENTER_SIZE", "caffe.PriorBoxParameter.CORNER"):
        raise UnsupportedLayer(layer, f"code_type {a['code_type']}")
    if not a["nms_threshold"] >= 0:
        raise UnsupportedLayer(layer, "negative nms_threshold")
    loc, conf, priors = (np.asarray(x, dtype=F) for x in inputs[:3])
    arm = [np.asarray(x, dtype=F) for x in inputs[3:5]]
    n = conf.shape[0]
    size = 4 if a["normalized"] else 5
    p = priors.shape[2] // size
    c = a["num_classes"] if layer.version == "opset1" else conf.shape[1] // p
    num_loc = 1 if a["share_location"] else c
    if conf.shape[1] != p * c or loc.shape[1] != p * num_loc * 4:
        raise InvalidLayer(layer, f"inputs {loc.shape}, {conf.shape}, {priors.shape} do not fit")
    keep, top = a["keep_top_k"][0], a["top_k"]
    rows = keep if keep > 0 else top * c if top > 0 else p * c
    out = np.zeros((n * rows, 7), F)
    count = 0
    for i in range(n):
        pr = priors[0 if priors.shape[0] == 1 else i]
        pri, var, actual = [], None, p
        for q in range(p):
            box = [F(pr[0][q * size + size - 4 + j]) for j in range(4)]
            if not a["normalized"]:
                box = [F(box[j] / F(a["input_width"] if j % 2 == 0 else a["input_height"])) for j in range(4)]
                if pr[0][q * size] == -1 and actual == p:
                    actual = q
            pri.append(box)
        if not a["variance_encoded_in_target"]:
            var = [[pr[1][q * 4 + j] for j in range(4)] for q in range(p)]
        lo = loc[i].reshape(p, num_loc, 4)
        cf = conf[i].reshape(p, c).copy()
        if arm:
            for q in range(p):
                if arm[0][i][q * 2 + 1] < F(a["objectness_score"]):
                    cf[q] = [F(1) if cl == a["background_label_id"] else F(0) for cl in range(c)]
            al = arm[1][i].reshape(p, num_loc, 4)
            wh = [a["input_width"], a["input_height"]] * 2
            first = [[_decode(pri[q], var[q] if var else None, al[q][l], a) for q in range(p)] for l in range(num_loc)]
            if not a["normalized"]:  # the runtime divides the first-stage boxes by the image size again
                first = [[[F(b[j] / F(wh[j])) for j in range(4)] for b in bs] for bs in first]
            boxes = [[_decode(first[l][q], var[q] if var else None, lo[q][l], a) for q in range(p)]
                     for l in range(num_loc)]
        else:
            boxes = [[_decode(pri[q], var[q] if var else None, lo[q][l], a) for q in range(p)]
                     for l in range(num_loc)]
        picked = _image(a, cf, boxes, actual, c, num_loc)
        for cl in sorted(picked):
            for q in picked[cl]:
                b = boxes[0 if num_loc == 1 else cl][q]
                if a["clip_after_nms"]:
                    b = [F(min(max(x, F(0)), F(1))) for x in b]
                out[count] = [i, cl - 1 if a["decrease_label_id"] else cl, cf[q][cl], *b]
                count += 1
    if count < len(out):
        out[count, 0] = -1
    dtype = layer.outputs[0].etype.numpy if layer.outputs[0].etype is not None else F
    return [out.reshape(1, 1, n * rows, 7).astype(dtype)]
