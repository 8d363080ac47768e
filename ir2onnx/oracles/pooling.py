"""Oracles of MaxPool-1/-8/-14 and AvgPool-1/-14/-16 (dilations), from the specs and OpenVINO's reference
implementation, window by window.

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


def _windows(shape, geo):
    """Yield (output spatial position, [input spatial positions inside the input], taps)."""
    for o in itertools.product(*[range(g[5]) for g in geo]):
        taps = list(itertools.product(*[range(g[0]) for g in geo]))
        inside = []
        for t in taps:
            pos = tuple(o[i] * g[1] - g[3] + t[i] * g[2] for i, g in enumerate(geo))
            if all(0 <= p < shape[2 + i] for i, p in enumerate(pos)):
                inside.append(pos)
        yield o, inside, len(taps)


def _max_pool(layer, x: np.ndarray, dilated: bool, with_indices: bool):
    geo = _geometry(layer, x.shape, dilated)
    out = np.empty((*x.shape[:2], *[g[5] for g in geo]), x.dtype)
    idx = np.zeros(out.shape, np.int64)
    lowest = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    axis = int(layer.attrs.get("axis", 0) or 0)
    axis = axis + x.ndim if axis < 0 else axis
    for o, inside, _ in _windows(x.shape, geo):
        for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
            best, best_pos = lowest, None
            for pos in inside:
                v = x[(n, c, *pos)]
                if best_pos is None or v > best or (v != v and best == best):
                    best, best_pos = v, pos
            out[(n, c, *o)] = best
            if best_pos is not None:
                full = (n, c, *best_pos)
                idx[(n, c, *o)] = np.ravel_multi_index(full[axis:], x.shape[axis:])
    results = [out]
    if with_indices:
        etype = layer.attrs.get("index_element_type") or "i64"
        etype = element_type(etype) if isinstance(etype, str) else etype
        results.append(idx.astype(etype.numpy))
    return results


def _avg_pool(layer, x: np.ndarray, dilated: bool = False):
    if x.dtype.kind != "f":
        raise UnsupportedLayer(layer, "AvgPool on integers is not supported")
    geo = _geometry(layer, x.shape, dilated=dilated)
    exclude = bool(layer.attrs.get("exclude-pad"))
    padded = any(g[3] or g[4] for g in geo)
    out = np.empty((*x.shape[:2], *[g[5] for g in geo]), x.dtype)
    for o, inside, taps in _windows(x.shape, geo):
        divisor = taps if (padded and not exclude) else len(inside)
        if divisor == 0:
            raise UnsupportedLayer(layer, "a pooling window holds no input element")
        for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
            total = sum(float(x[(n, c, *pos)]) for pos in inside)
            out[(n, c, *o)] = total / divisor
    return [out]


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
