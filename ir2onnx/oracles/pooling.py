"""Oracles of MaxPool-1/-8/-14 and AvgPool-1/-14/-16 (dilations), from the specs and OpenVINO's reference
implementation, kernel tap by kernel tap over every window at once.

Output size: explicit/valid pads with floor or ceil rounding (ceil_torch: a last window that
would start in the end padding is dropped); auto_pad same_*: ceil(X / s), padding split like
Convolution. MaxPool ignores padding (a window without input elements gives the lowest finite
value, like OpenVINO's CPU plugin) and its indices count in the flattened dims from ``axis`` on.
AvgPool divides by: the input elements in the window (exclude-pad, or include-pad when every pad
is zero), else the whole kernel size.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.element_types import element_type
from .registry import oracle


def _geometry(layer, shape, dilated: bool):
    """Per spatial axis: (kernel, stride, dilation, pad_begin, pad_end, output size)."""
    kernel = list(layer.attrs["kernel"])
    rank = len(kernel)
    if len(shape) != rank + 2:
        raise InvalidLayer(layer, "data rank does not match the kernel")
    strides = list(layer.attrs["strides"])
    dil = list(layer.attrs.get("dilations") or [1] * rank) if dilated else [1] * rank
    mode = layer.attrs.get("auto_pad") or "explicit"
    rounding = layer.attrs.get("rounding_type") or "floor"
    out = []
    for i in range(rank):
        x, k, s, d = shape[2 + i], kernel[i], strides[i], dil[i]
        if min(k, s, d) < 1:
            raise InvalidLayer(layer, "kernel, strides and dilations must be positive")
        span = (k - 1) * d + 1
        if mode in ("same_upper", "same_lower"):
            n = -(-x // s)
            total = max((n - 1) * s + span - x, 0)
            b = total // 2 if mode == "same_upper" else total - total // 2
            out.append((k, s, d, b, total - b, n))
            continue
        b, e = (0, 0) if mode == "valid" else (layer.attrs["pads_begin"][i], layer.attrs["pads_end"][i])
        room = x + b + e - span
        if room < 0 or b < 0 or e < 0:
            raise InvalidLayer(layer, "the padded input is smaller than the kernel")
        n = room // s + 1 if rounding == "floor" else -(-room // s) + 1
        if rounding == "ceil_torch" and (n - 1) * s >= x + b:
            n -= 1
        out.append((k, s, d, b, e, n))
    return out


def _taps(shape, geo):
    """Yield, for every kernel tap in row-major order, the input positions it reads for all
    output positions at once: per spatial axis ``p = o*s - pad_begin + t*d`` (an index array over
    the output positions, clipped into the input) and whether ``p`` is inside the input (a mask
    over the output positions, broadcast like the outputs' spatial dims)."""
    rank = len(geo)
    for t in itertools.product(*[range(g[0]) for g in geo]):
        index, inside = [], np.ones([g[5] for g in geo], bool)
        for i, g in enumerate(geo):
            p = np.arange(g[5]) * g[1] - g[3] + t[i] * g[2]
            ok = (p >= 0) & (p < shape[2 + i])
            view = [1] * rank
            view[i] = g[5]
            index.append(np.clip(p, 0, max(shape[2 + i] - 1, 0)).reshape(view))
            inside &= ok.reshape(view)
        yield index, inside


def _max_pool(layer, x: np.ndarray, dilated: bool, with_indices: bool):
    """Per output element: the first largest input element of its window in tap order (a NaN
    wins over numbers, the first NaN over later ones), its flat index from ``axis`` on."""
    geo = _geometry(layer, x.shape, dilated)
    out_shape = (*x.shape[:2], *[g[5] for g in geo])
    lowest = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    out = np.full(out_shape, lowest, x.dtype)
    idx = np.zeros(out_shape, np.int64)
    found = np.zeros(out_shape, bool)
    axis = int(layer.attrs.get("axis", 0) or 0)
    axis = axis + x.ndim if axis < 0 else axis
    n = np.arange(x.shape[0]).reshape((-1,) + (1,) * (x.ndim - 1))
    c = np.arange(x.shape[1]).reshape((1, -1) + (1,) * (x.ndim - 2))
    strides = [int(np.prod(x.shape[j + 1:])) for j in range(x.ndim)]  # row-major flat index
    if 0 not in x.shape:
        for index, inside in _taps(x.shape, geo):
            v = x[(slice(None), slice(None), *np.ix_(*[i.reshape(-1) for i in index]))]
            with np.errstate(invalid="ignore"):
                take = inside & (~found | (v > out) | ((v != v) & (out == out)))
            out = np.where(take, v, out)
            full = [n, c] + [i.reshape((1, 1) + i.shape) for i in index]
            flat = sum((full[j] * strides[j] for j in range(axis, x.ndim)), np.int64(0))
            idx = np.where(take, flat, idx)
            found |= inside
    results = [out]
    if with_indices:
        etype = layer.attrs.get("index_element_type") or "i64"
        etype = element_type(etype) if isinstance(etype, str) else etype
        results.append(idx.astype(etype.numpy))
    return results


def _avg_pool(layer, x: np.ndarray, dilated: bool = False):
    """Per output element: the float64 sum of the input elements of its window (in tap order)
    divided by the divisor, rounded once."""
    if x.dtype.kind != "f":
        raise UnsupportedLayer(layer, "AvgPool on integers is not supported")
    geo = _geometry(layer, x.shape, dilated=dilated)
    exclude = bool(layer.attrs.get("exclude-pad"))
    padded = any(g[3] or g[4] for g in geo)
    out_shape = (*x.shape[:2], *[g[5] for g in geo])
    total = np.zeros(out_shape, np.float64)
    count = np.zeros(out_shape[2:], np.int64)
    taps = 0
    for index, inside in _taps(x.shape, geo):
        taps += 1
        count = count + inside
        if 0 not in x.shape:
            v = x[(slice(None), slice(None), *np.ix_(*[i.reshape(-1) for i in index]))]
            total = total + np.where(inside, v.astype(np.float64), 0.0)
    divisor = np.full(count.shape, taps) if (padded and not exclude) else count
    if np.any(divisor == 0):
        raise UnsupportedLayer(layer, "a pooling window holds no input element")
    return [(total / divisor).astype(x.dtype)]


@oracle("MaxPool", "opset1")
def max_pool1(layer, inputs):
    return _max_pool(layer, inputs[0], dilated=False, with_indices=False)


@oracle("MaxPool", "opset8")
def max_pool8(layer, inputs):
    return _max_pool(layer, inputs[0], dilated=True, with_indices=True)


@oracle("MaxPool", "opset14")
def max_pool14(layer, inputs):
    return _max_pool(layer, inputs[0], dilated=True, with_indices=True)


@oracle("AvgPool", "opset1")
def avg_pool1(layer, inputs):
    return _avg_pool(layer, inputs[0])


@oracle("AvgPool", "opset14")
def avg_pool14(layer, inputs):
    return _avg_pool(layer, inputs[0])


@oracle("AvgPool", "opset16")
def avg_pool16(layer, inputs):
    return _avg_pool(layer, inputs[0], dilated=True)
