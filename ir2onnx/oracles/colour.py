"""Oracles of NV12toRGB/BGR-8 and I420toRGB/BGR-8 from the spec, pixel by pixel: the chroma sample
of pixel (h, w) is at (h // 2, w // 2) of its plane; in float32, c = y - 16, d = u - 128,
e = v - 128, r = 1.164c + 1.596e, g = 1.164c - 0.391d - 0.813e, b = 1.164c + 2.018d, clamped to
[0, 255]; u8 results round half to even, as OpenVINO's CPU plugin does (its reference
implementation rounds half away from zero; see docs/deviations.md)."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle

F = np.float32


def _pixel(y, u, v, dtype):
    c, d, e = F(y) - F(16), F(u) - F(128), F(v) - F(128)
    r = F(F(1.164) * c) + F(F(1.596) * e)
    g = F(F(F(1.164) * c) - F(F(0.391) * d)) - F(F(0.813) * e)
    b = F(F(1.164) * c) + F(F(2.018) * d)
    out = [min(max(float(F(t)), 0.0), 255.0) for t in (r, g, b)]
    return [round(t) if dtype == np.uint8 else t for t in out]  # Python's round: half to even


def _convert(layer, inputs, i420: bool, bgr: bool):
    y = np.asarray(inputs[0])
    n, h, w = y.shape[:3]
    if len(inputs) == 1:
        h = h * 2 // 3
        flat = y.reshape(n, -1)
        planes = flat[:, h * w:]
        luma = flat[:, :h * w].reshape(n, h, w)
        if i420:
            q = h * w // 4
            u, v = planes[:, :q].reshape(n, h // 2, w // 2), planes[:, q:2 * q].reshape(n, h // 2, w // 2)
        else:
            uv = planes.reshape(n, h // 2, w // 2, 2)
            u, v = uv[..., 0], uv[..., 1]
    elif i420 and len(inputs) == 3:
        luma, u, v = y[..., 0], inputs[1][..., 0], inputs[2][..., 0]
    elif not i420 and len(inputs) == 2:
        luma, u, v = y[..., 0], inputs[1][..., 0], inputs[1][..., 1]
    else:
        raise InvalidLayer(layer, "wrong number of planes")
    out = np.empty((n, h, w, 3), y.dtype)
    for b, i, j in itertools.product(range(n), range(h), range(w)):
        rgb = _pixel(luma[b, i, j], u[b, i // 2, j // 2], v[b, i // 2, j // 2], y.dtype)
        out[b, i, j] = rgb[::-1] if bgr else rgb
    return [out]


@oracle("NV12toRGB", "opset8")
def nv12_to_rgb8(layer, inputs):
    return _convert(layer, inputs, False, False)


@oracle("NV12toBGR", "opset8")
def nv12_to_bgr8(layer, inputs):
    return _convert(layer, inputs, False, True)


@oracle("I420toRGB", "opset8")
def i420_to_rgb8(layer, inputs):
    return _convert(layer, inputs, True, False)


@oracle("I420toBGR", "opset8")
def i420_to_bgr8(layer, inputs):
    return _convert(layer, inputs, True, True)
