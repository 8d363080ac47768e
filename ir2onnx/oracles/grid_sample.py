"""Oracle of GridSample-9 from the spec's formulas, one output element at a time.

A grid value g in [-1, 1] maps to a source coordinate ``(g + 1) / 2 * (size - 1)``
(align_corners) or ``((g + 1) * size - 1) / 2``, computed in the grid's float type (as the
frameworks do: a coordinate on a rounding tie for nearest depends on it). bilinear/nearest: border
clips that coordinate to [0, size - 1]; reflection reflects it about the borders (the pixel
centres 0 and size - 1 with align_corners, else the edges -0.5 and size - 0.5), then clips;
nearest rounds half to even; bilinear weights the 4 neighbours; samples outside read 0. bicubic
(A = -0.75) pads each of its 4 x 4 taps instead (zeros: 0 outside; border: clip; reflection:
reflect, then clip). The sum is taken in float64 and cast to the data's type.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle

A = -0.75


def _reflect(v: float, low2: int, high2: int) -> float:
    if low2 == high2:
        return 0.0
    lo, span = low2 / 2, (high2 - low2) / 2
    v = abs(v - lo)
    extra, flips = math.fmod(v, span), math.floor(v / span)
    return extra + lo if flips % 2 == 0 else span - extra + lo


def _pad_coordinate(v: float, size: int, pad: str, align: bool) -> float:
    if pad == "border":
        return min(max(v, 0.0), size - 1.0)
    if pad == "reflection":
        v = _reflect(v, 0, 2 * (size - 1)) if align else _reflect(v, -1, 2 * size - 1)
        return min(max(v, 0.0), size - 1.0)
    return v


def _cubic(t: float) -> list[float]:
    def near(d):  # |d| <= 1
        return ((A + 2) * d - (A + 3)) * d * d + 1

    def far(d):  # 1 < |d| < 2
        return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


@oracle("GridSample", "opset9")
def grid_sample9(layer, inputs):
    data, grid = (np.asarray(a) for a in inputs)
    if data.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2 or grid.shape[0] != data.shape[0]:
        raise InvalidLayer(layer, f"data {list(data.shape)} and grid {list(grid.shape)} do not fit")
    mode, pad = layer.attrs["mode"], layer.attrs["padding_mode"]
    align = bool(layer.attrs["align_corners"])
    n, c, h, w = data.shape
    ft = grid.dtype.type if grid.dtype != np.float16 else np.float32
    out = np.zeros((n, c) + grid.shape[1:3], np.float64)

    def unnormalize(g, size):
        g = ft(g)
        if align:
            return float((g + ft(1)) / ft(2) * ft(size - 1))
        return float(((g + ft(1)) * ft(size) - ft(1)) / ft(2))

    def read(b, yy, xx, padded):
        if padded:
            yy = int(_pad_coordinate(yy, h, pad, align))
            xx = int(_pad_coordinate(xx, w, pad, align))
        if 0 <= yy < h and 0 <= xx < w:
            return data[b, :, yy, xx].astype(np.float64)
        return np.zeros(c)

    for b in range(n):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                x = unnormalize(grid[b, i, j, 0], w)
                y = unnormalize(grid[b, i, j, 1], h)
                if mode == "bicubic":
                    x0, y0 = math.floor(x), math.floor(y)
                    wx, wy = _cubic(x - x0), _cubic(y - y0)
                    acc = np.zeros(c)
                    for dy in range(4):
                        for dx in range(4):
                            acc += wy[dy] * wx[dx] * read(b, y0 - 1 + dy, x0 - 1 + dx, pad != "zeros")
                    out[b, :, i, j] = acc
                    continue
                x, y = _pad_coordinate(x, w, pad, align), _pad_coordinate(y, h, pad, align)
                if mode == "nearest":
                    out[b, :, i, j] = read(b, int(round(y)), int(round(x)), False)  # round: half to even
                    continue
                x0, y0 = math.floor(x), math.floor(y)
                tx, ty = x - x0, y - y0
                out[b, :, i, j] = ((1 - ty) * ((1 - tx) * read(b, y0, x0, False) + tx * read(b, y0, x0 + 1, False))
                                   + ty * ((1 - tx) * read(b, y0 + 1, x0, False) + tx * read(b, y0 + 1, x0 + 1, False)))
    return [out.astype(data.dtype)]
