"""Oracles of Convolution-1 and GroupConvolution-1, from the spec: for every output position
``o`` and kernel tap ``k`` the input position is ``o*s - pad_begin + k*d`` (taps in the padding
read zeros), gathered for all ``o`` and ``k`` at once by :func:`windows` (a strided view of the
zero-padded input); float sums are accumulated in float64 (numpy.tensordot over channels and
taps) and rounded once to the output type, integer sums in int64 (wrapping), kept modulo 2^bits
of the output type."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .registry import oracle


def _axis_geometry(layer, mode: str, x: int, k: int, s: int, d: int, i: int) -> tuple[int, int]:
    """(pad_begin, output size) of spatial axis ``i``."""
    span = (k - 1) * d + 1
    if mode == "valid":
        begin, end = 0, 0
    elif mode in ("same_upper", "same_lower"):
        out = -(-x // s)
        total = max((out - 1) * s + span - x, 0)
        begin = total // 2 if mode == "same_upper" else total - total // 2
        return begin, out
    else:
        begin, end = layer.attrs["pads_begin"][i], layer.attrs["pads_end"][i]
        if begin < 0 or end < 0:
            raise UnsupportedLayer(layer, "negative pads")
    if x + begin + end < span:
        raise InvalidLayer(layer, f"axis {i}: padded input smaller than the kernel")
    return begin, (x + begin + end - span) // s + 1


def _conv(layer, x: np.ndarray, w: np.ndarray, groups: int) -> np.ndarray:
    """``w`` is [C_OUT, C_IN/groups, k...]."""
    rank = x.ndim - 2
    if w.ndim != rank + 2:
        raise InvalidLayer(layer, "data and filters ranks do not match")
    c_out, c_in_g = w.shape[:2]
    if x.shape[1] != groups * c_in_g or c_out % groups:
        raise InvalidLayer(layer, "channel counts do not match the filters")
    strides, dilations = layer.attrs["strides"], layer.attrs["dilations"]
    if len(strides) != rank or len(dilations) != rank:
        raise InvalidLayer(layer, "strides/dilations do not match the rank")
    mode = layer.attrs.get("auto_pad") or "explicit"
    geo = [_axis_geometry(layer, mode, x.shape[2 + i], w.shape[2 + i], strides[i], dilations[i], i)
           for i in range(rank)]
    out_sp = [g[1] for g in geo]
    # integers: int64 sums wrap modulo 2^64, so their low bits are the i32 result modulo 2^32
    acc_type = np.int64 if x.dtype.kind in "iu" else np.float64
    taps = windows(x.astype(acc_type), [g[0] for g in geo], out_sp, w.shape[2:], strides, dilations)
    wf = w.astype(acc_type)
    c_out_g = c_out // groups
    k_axes = list(range(2 + rank, 2 + 2 * rank))
    if groups > 1 and c_in_g == 1 and c_out_g == 1:  # depthwise: one einsum, not a tensordot per channel
        o, k = "opqr"[:rank], "ijkl"[:rank]
        out = np.einsum(f"nc{o}{k},c{k}->nc{o}", taps, wf[:, 0])
        return out.astype(x.dtype)
    parts = []
    for g in range(groups):  # sum over (c, k) of taps[n, c, o..., k...] * w[co, c, k...]
        part = np.tensordot(taps[:, g * c_in_g:(g + 1) * c_in_g], wf[g * c_out_g:(g + 1) * c_out_g],
                            axes=([1, *k_axes], [1, *range(2, 2 + rank)]))  # [N, O..., C_OUT/G]
        parts.append(np.moveaxis(part, -1, 1))
    out = np.concatenate(parts, axis=1) if parts else np.zeros((x.shape[0], 0, *out_sp), acc_type)
    return out.astype(x.dtype)


def windows(x: np.ndarray, pad_begin, out_sp, kernel, strides, dilations) -> np.ndarray:
    """``t[n, c, o..., k...] = x[n, c, o*s - pad_begin + k*d]`` (zero where that is in the
    padding), a [N, C, O..., K...] array: a strided view of ``x`` padded with zeros."""
    rank = x.ndim - 2
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    need = [(o - 1) * s + span for o, s, span in zip(out_sp, strides, spans)]  # padded length read
    pads = [(0, 0), (0, 0)] + [(b, max(0, n - b - size)) for b, n, size in zip(pad_begin, need, x.shape[2:])]
    xp = np.pad(x, pads)[(slice(None), slice(None), *[slice(0, max(n, 0)) for n in need])]
    if any(o == 0 for o in out_sp) or 0 in x.shape[:2]:
        return np.zeros((*x.shape[:2], *out_sp, *kernel), x.dtype)
    view = np.lib.stride_tricks.sliding_window_view(xp, spans, axis=tuple(range(2, 2 + rank)))
    return view[(slice(None), slice(None), *[slice(None, None, s) for s in strides],
                 *[slice(None, None, d) for d in dilations])]


@oracle("Convolution", "opset1")
def convolution(layer, inputs):
    x, w = inputs
    return [_conv(layer, x, w, 1)]


@oracle("GroupConvolution", "opset1")
def group_convolution(layer, inputs):
    x, w = inputs
    groups = w.shape[0]
    if w.ndim < 4:
        raise InvalidLayer(layer, "grouped filters need rank >= 4")
    merged = w.reshape((groups * w.shape[1], *w.shape[2:]))  # [G, C_OUT/G, ...] -> [C_OUT, ...]
    return [_conv(layer, x, merged, groups)]

