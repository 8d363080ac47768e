"""NV12toRGB/NV12toBGR-8 and I420toRGB/I420toBGR-8: YUV 4:2:0 images (NHWC, one channel per
plane) to interleaved RGB or BGR ``[N, H, W, 3]``.

Planes: NV12 single ``[N, 3H/2, W, 1]`` (Y rows, then interleaved UV rows) or Y ``[N, H, W, 1]``
and UV ``[N, H/2, W/2, 2]``; I420 single ``[N, 3H/2, W, 1]`` (Y, then the U plane of H*W/4
elements, then V) or Y, U ``[N, H/2, W/2, 1]``, V. Each chroma sample covers a 2x2 block (Gather
with row and column tables ``i // 2``). OpenVINO's reference formula, in f32 in its order:
``c = y - 16, d = u - 128, e = v - 128``; ``r = 1.164c + 1.596e``,
``g = 1.164c - 0.391d - 0.813e``, ``b = 1.164c + 2.018d``; clamped to [0, 255]; u8 then rounds
half to even (ONNX Round), as OpenVINO's CPU plugin does (measured: every one of 143 exact ties
in 49152 samples; OpenVINO's reference implementation rounds half away from zero instead:
docs/deviations.md). f16 is computed in f32. H and W must be static (the plane split
and the chroma tables depend on them); the batch may be dynamic.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.shapes import i64

TYPES = ("u8", "f16", "f32")
_FLOAT = 1


def _planes(ctx, layer, inputs, i420: bool):
    """Y, U, V as f32 ``[N, H, W, 1]`` (chroma already spread over its 2x2 blocks), and H, W."""
    g = ctx.b
    y = inputs[0]
    if y.etype is None or y.etype.name not in TYPES:
        raise UnsupportedLayer(layer, f"{layer.type} on {y.etype.name if y.etype else '?'} is not supported "
                                      f"({', '.join(TYPES)})")
    if any(v.etype != y.etype for v in inputs):
        raise InvalidLayer(layer, "the planes have different element types")
    if y.shape is None or len(y.shape) != 4 or y.shape[3] != 1:
        raise InvalidLayer(layer, f"the Y plane must be [N, H, W, 1], not {y.shape}")
    h, w = y.shape[1], y.shape[2]
    if h is None or w is None:
        raise UnsupportedLayer(layer, "a dynamic image height or width is not supported (the planes are split "
                                      "at conversion time)")
    single = len(inputs) == 1
    if single:
        if h % 3:
            raise InvalidLayer(layer, f"a single-plane image has 3H/2 rows, not {h}")
        h = h * 2 // 3
    if h % 2 or w % 2:
        raise InvalidLayer(layer, f"the image is {h}x{w}; YUV 4:2:0 needs even sizes")
    data = g.Cast(y, to=_FLOAT)
    luma = data
    if single:
        luma = g.Slice(data, i64(g, [0]), i64(g, [h]), i64(g, [1]))
        chroma = g.Reshape(g.Slice(data, i64(g, [h]), i64(g, [h * 3 // 2]), i64(g, [1])), i64(g, [0, -1]))
        if i420:
            quarter = h * w // 4
            u = g.Slice(chroma, i64(g, [0]), i64(g, [quarter]), i64(g, [1]))
            v = g.Slice(chroma, i64(g, [quarter]), i64(g, [2 * quarter]), i64(g, [1]))
            u, v = (g.Reshape(p, i64(g, [0, h // 2, w // 2, 1])) for p in (u, v))
        else:
            uv = g.Reshape(chroma, i64(g, [0, h // 2, w // 2, 2]))
            u, v = (g.Slice(uv, i64(g, [k]), i64(g, [k + 1]), i64(g, [3])) for k in (0, 1))
    elif i420:
        u, v = (g.Cast(p, to=_FLOAT) for p in inputs[1:])
    else:
        uv = g.Cast(inputs[1], to=_FLOAT)
        u, v = (g.Slice(uv, i64(g, [k]), i64(g, [k + 1]), i64(g, [3])) for k in (0, 1))
    rows, cols = i64(g, np.arange(h) // 2, "rows"), i64(g, np.arange(w) // 2, "cols")
    u, v = (g.Gather(g.Gather(p, rows, axis=1), cols, axis=2) for p in (u, v))
    return luma, u, v


def _convert(ctx, layer, inputs, i420: bool, bgr: bool):
    g = ctx.b
    expected = (1, 3) if i420 else (1, 2)
    if len(inputs) not in expected:
        raise InvalidLayer(layer, f"{layer.type} takes {' or '.join(map(str, expected))} planes, not {len(inputs)}")
    y, u, v = _planes(ctx, layer, inputs, i420)
    f = lambda value, hint: g.const(np.asarray(value, np.float32), np.float32, hint)  # noqa: E731
    c, d, e = g.Sub(y, f(16, "y_offset")), g.Sub(u, f(128, "uv_offset")), g.Sub(v, f(128, "uv_offset"))
    luma = g.Mul(c, f(1.164, "k_luma"))
    r = g.Add(luma, g.Mul(e, f(1.596, "k_rv")))
    gr = g.Sub(g.Sub(luma, g.Mul(d, f(0.391, "k_gu"))), g.Mul(e, f(0.813, "k_gv")))
    b = g.Add(luma, g.Mul(d, f(2.018, "k_bu")))
    out = g.Clip(g.Concat(*((b, gr, r) if bgr else (r, gr, b)), axis=3), f(0, "zero"), f(255, "max"))
    etype = inputs[0].etype
    if etype.name == "u8":
        return [g.Cast(g.Round(out), to=etype.onnx)]
    return [out if etype.name == "f32" else g.Cast(out, to=etype.onnx)]


@lowers("NV12toRGB", "opset8")
def nv12_to_rgb8(ctx, layer, inputs):
    """NV12toRGB-8 -> Cast, Slice/Reshape (planes), Gather (chroma 2x2), Sub, Mul, Add, Concat, Clip
    [-> Round, Cast for u8]."""
    return _convert(ctx, layer, inputs, i420=False, bgr=False)


@lowers("NV12toBGR", "opset8")
def nv12_to_bgr8(ctx, layer, inputs):
    """NV12toBGR-8 -> as NV12toRGB-8, channels in B, G, R order."""
    return _convert(ctx, layer, inputs, i420=False, bgr=True)


@lowers("I420toRGB", "opset8")
def i420_to_rgb8(ctx, layer, inputs):
    """I420toRGB-8 -> as NV12toRGB-8 with separate U and V planes (single plane: Slice, Reshape)."""
    return _convert(ctx, layer, inputs, i420=True, bgr=False)


@lowers("I420toBGR", "opset8")
def i420_to_bgr8(ctx, layer, inputs):
    """I420toBGR-8 -> as I420toRGB-8, channels in B, G, R order."""
    return _convert(ctx, layer, inputs, i420=True, bgr=True)
