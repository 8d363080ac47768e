"""Oracles of ExperimentalDetectronPriorGridGenerator-6 and ExperimentalDetectronTopKROIs-6 from OpenVINO's specification: loop over
cell rows h, cell columns w and priors n; each coordinate is the prior's plus
``step * (w + 0.5)`` (x) or ``step * (h + 0.5)`` (y) in float32, the step being the stride or
``IW / W`` (``IH / H``) when the stride is 0. TopKROIs: order the rois by probability, highest first (equal
probabilities: smaller index first), copy the first max_rois; rows past N are zeros."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle

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
