"""Patches: ExtractImagePatches-3 -> Concat (zero rows and columns: the padding), one strided Slice
per kernel position, Concat along channels; Col2Im-15 -> see its lowering.

ExtractImagePatches output channel ``(kh * KW + kw) * C + c`` at ``(oh, ow)`` is input
``[c, oh * SH - PT + kh * RH, ow * SW - PL + kw * RW]`` (0 outside), as the spec's examples and
OpenVINO's reference index it; the same_* padding is the reference's: the total
``PH = (ceil(H / SH) - 1) * SH + (KH - 1) * RH + 1 - H`` is used only when ``0 < PH`` and ``PH`` is
below the dilated kernel, split evenly, the odd one at the end (same_upper) or the start
(same_lower). Pure data movement, bit for bit; the spatial dims must be static (the padding and
output size are decided at conversion), batch and channels may be dynamic.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ..lowering.shapes import i64


def patch_geometry(size: int, k: int, s: int, r: int, auto_pad: str) -> tuple[int, int]:
    """(output size, padding at the start) of one spatial axis."""
    eff = (k - 1) * r + 1
    if auto_pad == "valid":
        return max((size - eff) // s + 1, 0), 0
    out = -(-size // s)
    total = (out - 1) * s + eff - size
    if not 0 < total < eff:
        return out, 0
    if total % 2 == 0:
        return out, total // 2
    return out, (total + 1) // 2 if auto_pad == "same_lower" else (total - 1) // 2


def _zeros_around(g, x, axis: int, before: int, after: int, etype) -> str:
    """``x`` with ``before``/``after`` zero slices along ``axis`` (2 or 3) by Concat (every type)."""
    from onnx import helper

    if before <= 0 and after <= 0:
        return x
    shape = g.Shape(x)
    parts = []
    for n in (before, after):
        if n <= 0:
            parts.append(None)
            continue
        dims = g.Concat(g.Slice(shape, i64(g, [0]), i64(g, [axis])), i64(g, [n]),
                        g.Slice(shape, i64(g, [axis + 1]), i64(g, [4])), axis=0)
        zero = helper.make_tensor("zero", etype.onnx, [1], np.zeros(1, etype.numpy).tobytes(), raw=True) \
            if etype.numpy is not None else helper.make_tensor("zero", etype.onnx, [1], [0])
        parts.append(g.ConstantOfShape(dims, value=zero))
    return g.Concat(*[p for p in (parts[0], x, parts[1]) if p is not None], axis=axis)


@lowers("ExtractImagePatches", "opset3")
def extract_image_patches3(ctx, layer, inputs):
    """ExtractImagePatches-3 (data [N, C, H, W]; sizes, strides, rates, auto_pad) -> Concat (zero
    padding), KH * KW strided Slices, Concat(axis 1)."""
    (x,) = inputs
    if x.rank != 4:
        raise InvalidLayer(layer, f"data must be 4-D, got rank {x.rank}")
    ctx.onnx_type(layer, x.etype)
    sizes, strides, rates = (list(layer.attrs[a]) for a in ("sizes", "strides", "rates"))
    if any(len(v) != 2 for v in (sizes, strides, rates)) or min(sizes + strides + rates) < 1:
        raise InvalidLayer(layer, f"sizes {sizes}, strides {strides} and rates {rates} must be two positive ints")
    auto_pad = layer.attrs["auto_pad"]
    h, w = x.shape[2], x.shape[3]
    if h is None or w is None:
        raise UnsupportedLayer(layer, "dynamic spatial dims are not supported (padding and output size are "
                                      "decided at conversion)")
    (oh, pt), (ow, pl) = (patch_geometry(d, k, s, r, auto_pad) for d, k, s, r in zip((h, w), sizes, strides, rates))
    g = ctx.b
    need_h, need_w = (oh - 1) * strides[0] + (sizes[0] - 1) * rates[0] + 1, (ow - 1) * strides[1] + (sizes[1] - 1) * rates[1] + 1
    padded = _zeros_around(g, x.name, 2, pt, need_h - pt - h, x.etype) if oh > 0 else x.name
    padded = _zeros_around(g, padded, 3, pl, need_w - pl - w, x.etype) if ow > 0 else padded
    blocks = []
    for kh in range(sizes[0]):
        for kw in range(sizes[1]):
            top, left = kh * rates[0], kw * rates[1]
            blocks.append(g.Slice(padded, i64(g, [top, left]),
                                  i64(g, [top + (oh - 1) * strides[0] + 1 if oh else top, left + (ow - 1) * strides[1] + 1 if ow else left]),
                                  i64(g, [2, 3]), i64(g, strides)))
    return [blocks[0] if len(blocks) == 1 else g.Concat(*blocks, axis=1)]
