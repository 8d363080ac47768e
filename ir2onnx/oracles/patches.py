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


@oracle("Col2Im", "opset15")
def col2im15(layer, inputs):
    """Col2Im: every input element (channel c, kernel row ki, kernel col kj, block (bh, bw)) is
    added to output ``[c, bh * SH - PB0 + ki * DH, bw * SW - PB1 + kj * DW]`` when inside; sums
    from 0 in that order; floats in the element type as OpenVINO's reference."""
    data, size, kernel = inputs
    batched = data.ndim == 3
    x = data if batched else data[None]
    (h, w), (kh, kw) = [int(v) for v in size.reshape(-1)], [int(v) for v in kernel.reshape(-1)]
    (sh, sw), (dh, dw), (p0, p1), (e0, e1) = (layer.attrs[a] for a in ("strides", "dilations", "pads_begin", "pads_end"))
    blocks_h, blocks_w = (h + p0 + e0 - (dh * (kh - 1) + 1)) // sh + 1, (w + p1 + e1 - (dw * (kw - 1) + 1)) // sw + 1
    if x.shape[1] % (kh * kw) or x.shape[2] != blocks_h * blocks_w:
        raise InvalidLayer(layer, f"data {data.shape} does not fit kernel {kh}x{kw} and {blocks_h}x{blocks_w} blocks")
    channels = x.shape[1] // (kh * kw)
    out = np.zeros((x.shape[0], channels, h, w), x.dtype)
    with np.errstate(over="ignore"):
        for n, col in itertools.product(range(x.shape[0]), range(x.shape[1])):
            c, ki, kj = col // (kh * kw), (col // kw) % kh, col % kw
            for bh, bw in itertools.product(range(blocks_h), range(blocks_w)):
                y, z = bh * sh - p0 + ki * dh, bw * sw - p1 + kj * dw
                if 0 <= y < h and 0 <= z < w:
                    out[n, c, y, z] = out[n, c, y, z] + x[n, col, bh * blocks_w + bw]
    return [out if batched else out[0]]
