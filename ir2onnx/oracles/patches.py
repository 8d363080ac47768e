"""Oracles of ExtractImagePatches-3 and Col2Im-15, element by element.

ExtractImagePatches: output ``[n, (kh * KW + kw) * C + c, oh, ow]`` is input
``[n, c, oh * SH - PT + kh * RH, ow * SW - PL + kw * RW]``, 0 outside (the spec's examples; the
same_* padding ``PT`` as OpenVINO's reference computes it: used only when the total is positive and
below the dilated kernel, odd one at the end for same_upper, at the start for same_lower)."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _axis(size, k, s, r, auto_pad):
    eff = (k - 1) * r + 1
    if auto_pad == "valid":
        return max((size - eff) // s + 1, 0), 0
    out = -(-size // s)
    total = (out - 1) * s + eff - size
    if total <= 0 or total >= eff:
        return out, 0
    return out, total // 2 + (total % 2 if auto_pad == "same_lower" else 0)


@oracle("ExtractImagePatches", "opset3")
def extract_image_patches3(layer, inputs):
    (x,) = inputs
    if x.ndim != 4:
        raise InvalidLayer(layer, f"data must be 4-D, got {x.shape}")
    (kh_, kw_), (sh, sw), (rh, rw) = (layer.attrs[a] for a in ("sizes", "strides", "rates"))
    n, c, h, w = x.shape
    (oh, pt), (ow, pl) = _axis(h, kh_, sh, rh, layer.attrs["auto_pad"]), _axis(w, kw_, sw, rw, layer.attrs["auto_pad"])
    out = np.zeros((n, kh_ * kw_ * c, oh, ow), x.dtype)
    for b, i, j, kh, kw, ch in itertools.product(range(n), range(oh), range(ow), range(kh_), range(kw_), range(c)):
        y, z = i * sh - pt + kh * rh, j * sw - pl + kw * rw
        if 0 <= y < h and 0 <= z < w:
            out[b, (kh * kw_ + kw) * c + ch, i, j] = x[b, ch, y, z]
    return [out]
