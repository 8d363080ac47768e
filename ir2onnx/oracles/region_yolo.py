"""Oracles of RegionYolo-1 and ReorgYolo-2, element by element from OpenVINO's operation
specification: RegionYolo by (batch, region, entry, position) with the logistic function and a
softmax over the class entries; ReorgYolo by the spec's index formula."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-np.float64(v)))


@oracle("RegionYolo", "opset1")
def region_yolo(layer, inputs):
    x = np.asarray(inputs[0])
    a = layer.attrs
    if x.ndim != 4:
        raise InvalidLayer(layer, "RegionYolo needs a 4-D input")
    n_, c_, h_, w_ = x.shape
    coords, classes, soft = a["coords"], a["classes"], a["do_softmax"]
    regions = a["num"] if soft else len(a["mask"])
    entries = coords + classes + 1
    if c_ != regions * entries:
        raise InvalidLayer(layer, "channels must be regions * (coords + classes + 1)")
    out = np.zeros(x.shape, np.float64)
    for n, r, h, w in itertools.product(range(n_), range(regions), range(h_), range(w_)):
        ch = r * entries
        cls = [np.float64(x[n, ch + coords + 1 + k, h, w]) for k in range(classes)]
        if soft and classes:
            top = max(cls)
            ex = [np.exp(v - top) for v in cls]
            total = sum(ex)
        for e in range(entries):
            v = x[n, ch + e, h, w]
            if e < 2 or e == coords:
                out[n, ch + e, h, w] = _sigmoid(v)
            elif e < coords:
                out[n, ch + e, h, w] = v
            else:
                out[n, ch + e, h, w] = ex[e - coords - 1] / total if soft else _sigmoid(v)
    out = out.astype(x.dtype)
    if soft:
        start, end = a["axis"] % 4, a["end_axis"] % 4
        shape = x.shape[:start] + (int(np.prod(x.shape[start:end + 1])),) + x.shape[end + 1:]
        out = out.reshape(shape)
    return [out]


@oracle("ReorgYolo", "opset2")
def reorg_yolo(layer, inputs):
    x = np.asarray(inputs[0])
    s = int(layer.attrs["stride"][0])
    n_, c_, h_, w_ = x.shape
    if c_ % (s * s) or h_ % s or w_ % s:
        raise InvalidLayer(layer, "ReorgYolo needs C divisible by stride^2 and H, W by stride")
    flat_in, flat_out = x.reshape(-1), np.empty(x.size, x.dtype)
    oc = c_ // (s * s)  # the reference's channel count of the input seen with H*s rows, W*s columns
    for n, c, h, w in itertools.product(range(n_), range(c_), range(h_), range(w_)):
        off, k = divmod(c, oc)
        src = ((n * oc + k) * (h_ * s) + h * s + off // s) * (w_ * s) + w * s + off % s
        flat_out[((n * c_ + c) * h_ + h) * w_ + w] = flat_in[src]
    return [flat_out.reshape(n_, c_ * s * s, h_ // s, w_ // s)]
