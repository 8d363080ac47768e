"""Oracle of GenerateProposals-9, image by image, from OpenVINO's specification and what its CPU
plugin computes: the proposals (h, w, a) in that order, each anchor decoded with the offset ``o``
(1, or 0 when normalized) in float32 and clamped to ``[0, size - o]``; the ``pre_nms_count``
highest scores (equal scores: smaller proposal first); of them, the boxes whose ``x1 - x0 + o`` is
below ``min_size * scale_w`` (or height below ``min_size * scale_h``) are dropped; greedy NMS in
score order, a box dropped when its IoU with a kept box, with ``+ o`` sizes and 0 when they do
not touch (``x0 <= x1'`` both ways, likewise y), is above nms_threshold (a negative one drops
boxes that do not touch); at most post_nms_count per image. The rows
of all images one after another; rois_num the count per image."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle

f = np.float32


def _decode(anchor, d, img_h, img_w, o):
    out = []
    for p0, p1, dc, dl, lim in ((anchor[0], anchor[2], d[0], d[2], img_w), (anchor[1], anchor[3], d[1], d[3], img_h)):
        ww = f(f(p1 - p0) + o)
        pc = f(f(dc * ww) + f(p0 + f(f(0.5) * ww)))
        pw = f(f(np.exp(min(dl, f(np.log(1000.0 / 16.0))))) * ww)
        clamp = lambda v: max(f(0), min(v, f(lim - o)))  # noqa: E731
        out.append((clamp(f(pc - f(f(0.5) * pw))), clamp(f(f(pc + f(f(0.5) * pw)) - o))))
    (x0, x1), (y0, y1) = out
    return x0, y0, x1, y1


def _suppresses(a, b, o, thr):
    """Whether kept box ``a`` drops box ``b``: their IoU, 0 when they do not touch, exceeds thr."""
    if not (a[0] <= b[2] and a[1] <= b[3] and b[0] <= a[2] and b[1] <= a[3]):
        return bool(thr < f(0))
    w = max(f(0), f(f(min(a[2], b[2]) - max(a[0], b[0])) + o))
    h = max(f(0), f(f(min(a[3], b[3]) - max(a[1], b[1])) + o))
    inter = f(w * h)
    area_a = f(f(f(a[2] - a[0]) + o) * f(f(a[3] - a[1]) + o))
    area_b = f(f(f(b[2] - b[0]) + o) * f(f(b[3] - b[1]) + o))
    with np.errstate(divide="ignore", invalid="ignore"):
        return bool(thr < f(inter / f(f(area_a + area_b) - inter)))


@oracle("GenerateProposals", "opset9")
def generate_proposals(layer, inputs):
    a = layer.attrs
    im_info, anchors, deltas, scores = (np.asarray(v, f) for v in inputs)
    N, A, H, W = scores.shape
    if anchors.shape != (H, W, A, 4) or deltas.shape != (N, A * 4, H, W) or im_info.shape not in ((N, 3), (N, 4)):
        raise InvalidLayer(layer, "im_info must be [N, 3 or 4], anchors [H, W, A, 4], deltas [N, A*4, H, W], "
                                  "scores [N, A, H, W]")
    o = f(0) if a["normalized"] else f(1)
    thr, pre, post = f(a["nms_threshold"]), int(a["pre_nms_count"]), int(a["post_nms_count"])
    rois, out_scores, counts = [], [], []
    for n in range(N):
        info = im_info[n]
        min_h = f(f(a["min_size"]) * info[2])
        min_w = f(f(a["min_size"]) * info[-1])
        props = []
        for h in range(H):
            for w in range(W):
                for k in range(A):
                    box = _decode(anchors[h, w, k], deltas[n, 4 * k:4 * k + 4, h, w], info[0], info[1], o)
                    alive = min_w <= f(f(box[2] - box[0]) + o) and min_h <= f(f(box[3] - box[1]) + o)
                    props.append((box, scores[n, k, h, w], alive))
        order = sorted(range(len(props)), key=lambda i: (-float(props[i][1]), i))[:pre]
        kept = []
        for i in order:
            if len(kept) == post:
                break
            if props[i][2] and not any(_suppresses(props[j][0], props[i][0], o, thr) for j in kept):
                kept.append(i)
        rois += [props[i][0] for i in kept]
        out_scores += [props[i][1] for i in kept]
        counts.append(len(kept))
    return [np.array(rois, f).reshape(-1, 4), np.array(out_scores, f).reshape(-1),
            np.array(counts, np.int32 if a["roi_num_type"] == "i32" else np.int64)]
