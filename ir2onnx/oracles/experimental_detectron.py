"""Oracles of ExperimentalDetectronPriorGridGenerator-6 and ExperimentalDetectronTopKROIs-6 from OpenVINO's specification: loop over
cell rows h, cell columns w and priors n; each coordinate is the prior's plus
``step * (w + 0.5)`` (x) or ``step * (h + 0.5)`` (y) in float32, the step being the stride or
``IW / W`` (``IH / H``) when the stride is 0. TopKROIs: order the rois by probability, highest first (equal
probabilities: smaller index first), copy the first max_rois; rows past N are zeros.
ROIFeatureExtractor, GenerateProposalsSingleImage and DetectionOutput: per roi, per sample, per
candidate, as their docstrings say."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle
from .roi_sampling import bilinear

f = np.float32


@oracle("ExperimentalDetectronPriorGridGenerator", "opset6")
def prior_grid_generator(layer, inputs):
    a = layer.attrs
    priors, fm, im = (np.asarray(v) for v in inputs)
    if priors.ndim != 2 or priors.shape[1] != 4 or fm.ndim != 4 or im.ndim != 4:
        raise InvalidLayer(layer, "priors must be [N, 4], feature_map and im_data 4D")
    H, W = fm.shape[2], fm.shape[3]
    if int(a["h"]) not in (0, H) or int(a["w"]) not in (0, W):
        raise InvalidLayer(layer, "h/w other than the feature map's size leave the output undefined")
    step_x = f(a["stride_x"]) if f(a["stride_x"]) != 0 else f(im.shape[3]) / f(W)
    step_y = f(a["stride_y"]) if f(a["stride_y"]) != 0 else f(im.shape[2]) / f(H)
    out = np.zeros((H, W, priors.shape[0], 4), priors.dtype)
    for h in range(H):
        for w in range(W):
            for n in range(priors.shape[0]):
                x0, y0, x1, y1 = (f(v) for v in priors[n])
                dx, dy = f(step_x * f(f(w) + f(0.5))), f(step_y * f(f(h) + f(0.5)))
                out[h, w, n] = [f(x0 + dx), f(y0 + dy), f(x1 + dx), f(y1 + dy)]
    return [out.reshape(-1, 4) if a["flatten"] else out]


@oracle("ExperimentalDetectronTopKROIs", "opset6")
def topk_rois(layer, inputs):
    rois, probs = (np.asarray(v) for v in inputs)
    if rois.ndim != 2 or rois.shape[1] != 4 or probs.shape != (rois.shape[0],):
        raise InvalidLayer(layer, "input_rois must be [N, 4] and rois_probs [N]")
    max_rois = int(layer.attrs["max_rois"])
    order = sorted(range(rois.shape[0]), key=lambda i: (-float(probs[i]), i))
    out = np.zeros((max_rois, 4), rois.dtype)
    for row, i in enumerate(order[:max_rois]):
        out[row] = rois[i]
    return [out]


def _roi_align(fmap, roi, scale, size, ratio, aligned):
    off = f(0.5) if aligned else f(0)
    x0, y0, x1, y1 = (f(f(v) * scale) - off for v in roi)
    rw, rh = max(f(x1 - x0), f(1)), max(f(y1 - y0), f(1))
    bw, bh = f(rw / f(size)), f(rh / f(size))
    gh = ratio if ratio > 0 else int(np.ceil(rh / f(size)))
    gw = ratio if ratio > 0 else int(np.ceil(rw / f(size)))
    out = np.zeros((fmap.shape[0], size, size), f)
    for ph in range(size):
        for pw in range(size):
            acc = np.zeros(fmap.shape[0], f)
            for iy in range(gh):
                y = f(f(y0 + f(ph) * bh) + f(f(f(iy) + f(0.5)) * bh / f(gh)))
                for ix in range(gw):
                    x = f(f(x0 + f(pw) * bw) + f(f(f(ix) + f(0.5)) * bw / f(gw)))
                    acc = (acc + bilinear(fmap, y, x, f)).astype(f)
            out[:, ph, pw] = acc / f(gh * gw)
    return out


@oracle("ExperimentalDetectronROIFeatureExtractor", "opset6")
def roi_feature_extractor(layer, inputs):
    a = layer.attrs
    rois, maps = np.asarray(inputs[0], f), [np.asarray(m, f) for m in inputs[1:]]
    scales = list(a["pyramid_scales"])
    if rois.ndim != 2 or rois.shape[1] != 4 or len(scales) != len(maps) or any(m.shape[0] != 1 for m in maps):
        raise InvalidLayer(layer, "rois must be [R, 4], one pyramid scale per [1, C, H, W] map")
    size, ratio, L = int(a["output_size"]), int(a["sampling_ratio"]), len(maps)
    out = np.zeros((rois.shape[0], maps[0].shape[1], size, size), f)
    for i, (x0, y0, x1, y1) in enumerate(rois):
        area = f(f(x1 - x0) * f(y1 - y0))
        if not area > 0:
            continue  # no level: zeros
        lvl = int(np.floor(f(np.log2(f(f(np.sqrt(area) / f(224)) + f(1e-6)))) + f(2)))
        lvl = min(max(lvl, 0), L - 1)
        out[i] = _roi_align(maps[lvl][0], (x0, y0, x1, y1), f(f(1) / f(scales[lvl])), size, ratio,
                            bool(a["aligned"]))
    return [out, rois.copy()]


def _iou(a, b):
    """Intersection over union without offset, as the spec's NMS computes it."""
    w = f(min(a[2], b[2]) - max(a[0], b[0]))
    h = f(min(a[3], b[3]) - max(a[1], b[1]))
    inter = f(max(f(0), w) * max(f(0), h))
    area_a, area_b = f(f(a[2] - a[0]) * f(a[3] - a[1])), f(f(b[2] - b[0]) * f(b[3] - b[1]))
    return f(inter / f(f(area_a + area_b) - inter)) if inter > 0 else f(0)


@oracle("ExperimentalDetectronGenerateProposalsSingleImage", "opset6")
def generate_proposals_single_image(layer, inputs):
    a = layer.attrs
    im_info, anchors, deltas, scores = (np.asarray(v, f) for v in inputs)
    A, H, W = scores.shape
    if anchors.shape != (H * W * A, 4) or deltas.shape != (A * 4, H, W):
        raise InvalidLayer(layer, "anchors must be [H*W*A, 4], deltas [A*4, H, W], scores [A, H, W]")
    img_h, img_w = f(im_info[0]), f(im_info[1])
    max_log, min_size = f(np.log(1000.0 / 16.0)), f(a["min_size"])
    props = []
    for h in range(H):
        for w in range(W):
            for k in range(A):
                box = anchors[(h * W + w) * A + k]
                dx, dy, dlw, dlh = (deltas[4 * k + j, h, w] for j in range(4))
                out = []
                for p0, p1, dc, dl, lim in ((box[0], box[2], dx, dlw, img_w), (box[1], box[3], dy, dlh, img_h)):
                    ww = f(f(p1 - p0) + f(1))
                    pc = f(f(dc * ww) + f(p0 + f(f(0.5) * ww)))
                    half = f(f(0.5) * f(f(np.exp(min(dl, max_log))) * ww))
                    clamp = lambda v: max(f(0), min(v, f(lim - f(1))))  # noqa: E731
                    out.append((clamp(f(pc - half)), clamp(f(f(pc + half) - f(1)))))
                (x0, x1), (y0, y1) = out
                ok = min_size <= f(f(x1 - x0) + f(1)) and min_size <= f(f(y1 - y0) + f(1))
                props.append(((x0, y0, x1, y1), scores[k, h, w] if ok else f(0) * scores[k, h, w]))
    order = sorted(range(len(props)), key=lambda i: (-float(props[i][1]), i))[:int(a["pre_nms_count"])]
    kept = []
    for i in order:
        if len(kept) == int(a["post_nms_count"]):
            break
        if not any(_iou(props[j][0], props[i][0]) > f(a["nms_threshold"]) for j in kept):  # NaN: kept
            kept.append(i)
    post = int(a["post_nms_count"])
    rois, out_scores = np.zeros((post, 4), f), np.zeros(post, f)
    for row, i in enumerate(kept):
        rois[row], out_scores[row] = props[i][0], props[i][1]
    return [rois, out_scores]


def _overlap(a, b, area_a, area_b):
    """The Detectron NMS overlap with +1 sizes: 0 for boxes apart or not meeting."""
    if b[0] > a[2] or b[2] < a[0] or b[1] > a[3] or b[3] < a[1]:
        return f(0)
    iw = f(f(min(a[2], b[2]) - max(a[0], b[0])) + f(1))
    ih = f(f(min(a[3], b[3]) - max(a[1], b[1])) + f(1))
    if iw <= 0 or ih <= 0:
        return f(0)
    inter = f(iw * ih)
    return f(inter / f(f(area_a + area_b) - inter))


@oracle("ExperimentalDetectronDetectionOutput", "opset6")
def detection_output(layer, inputs):
    """Per roi r and class c >= 1: the box decoded by the class's deltas (offset 1, clamped at 0;
    rois with no width or height give zero boxes and scores); per class, the scores above
    score_threshold in descending order (ties: smaller roi), greedy NMS (+1 overlap >
    nms_threshold drops), the first post_nms_count kept; all classes' kept boxes in class order
    when they fit max_detections_per_image rows, else the highest scores (ties: smaller roi, then
    smaller class); the rest of the rows zeros (measured on OpenVINO's CPU plugin)."""
    a = layer.attrs
    rois, deltas, scores = (np.asarray(v, f) for v in inputs[:3])
    C, post, D = int(a["num_classes"]), int(a["post_nms_count"]), int(a["max_detections_per_image"])
    N = rois.shape[0]
    if rois.shape != (N, 4) or deltas.shape != (N, 4 * C) or scores.shape != (N, C):
        raise InvalidLayer(layer, "rois must be [N, 4], deltas [N, 4 * num_classes], scores [N, num_classes]")
    wts, max_log = [f(w) for w in a["deltas_weights"]], f(a["max_delta_log_wh"])
    boxes, areas, conf = {}, {}, {}
    for c in range(1, C):
        for r in range(N):
            x0, y0, x1, y1 = rois[r]
            boxes[c, r], areas[c, r], conf[c, r] = (f(0),) * 4, f(0), f(0)
            if not (f(x1 - x0) > 0 and f(y1 - y0) > 0):
                continue
            d = [f(deltas[r, 4 * c + j] / wts[j]) for j in range(4)]
            lo, hi = [], []
            for p0, p1, dc, dl in ((x0, x1, d[0], d[2]), (y0, y1, d[1], d[3])):
                ww = f(f(p1 - p0) + f(1))
                pc = f(f(dc * ww) + f(p0 + f(f(0.5) * ww)))
                pw = f(f(np.exp(min(dl, max_log))) * ww)
                lo.append(max(f(0), f(pc - f(f(0.5) * pw))))
                hi.append(max(f(0), f(f(pc + f(f(0.5) * pw)) - f(1))))
            boxes[c, r] = (lo[0], lo[1], hi[0], hi[1])
            areas[c, r] = f(f(f(hi[0] - lo[0]) + f(1)) * f(f(hi[1] - lo[1]) + f(1)))
            conf[c, r] = scores[r, c]
    found = []  # (class, roi) in class order, NMS order
    for c in range(1, C):
        order = sorted((r for r in range(N) if conf[c, r] > f(a["score_threshold"])), key=lambda r: (-conf[c, r], r))
        kept = []
        for r in order:
            if not any(_overlap(boxes[c, r], boxes[c, k], areas[c, r], areas[c, k]) > f(a["nms_threshold"])
                       for k in kept):  # a NaN overlap drops nothing
                kept.append(r)
        found += [(c, r) for r in (kept if post < 0 else kept[:post])]
    if len(found) > D:
        found = sorted(found, key=lambda cr: (-conf[cr], cr[1], cr[0]))[:D]
    out_boxes, out_classes, out_scores = np.zeros((D, 4), f), np.zeros(D, np.int32), np.zeros(D, f)
    for row, (c, r) in enumerate(found):
        out_boxes[row], out_classes[row], out_scores[row] = boxes[c, r], c, conf[c, r]
    return [out_boxes, out_classes, out_scores]
