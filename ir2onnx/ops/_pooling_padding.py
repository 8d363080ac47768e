"""Pooling on dynamic spatial dims whose output size OpenVINO computes from the run-time size
(rounding_type ceil / ceil_torch, auto_pad same_* with a stride > 1): the graph computes, per
axis, the begin and end pads that make ONNX's floor rounding give exactly OpenVINO's count
(Shape -> integer arithmetic -> Concat), pads the input with them (Pad) and pools without pads.

For an input size X, pads b and e, window span K and stride s (room = X + b + e - K >= 0):

* ceil: n = ceil(room / s) + 1; ceil_torch: the same, minus the last window when it starts in
  the end padding ((n - 1) * s >= X + b);
* same_upper / same_lower: n = ceil(X / s), total = max((n - 1) * s + K - X, 0) split as
  OpenVINO's rule (the smaller half first for same_upper, last for same_lower);
* the end pad given to ONNX is max((n - 1) * s + K - X - b, 0): floor rounding then yields n
  windows exactly (a window never starts past the padded input, and a shorter pad only drops
  windows that OpenVINO would not produce either).

A window that starts past the input (ceil with s - 1 + e >= K) holds padding only: MaxPool pads
with the type's lowest value, so it gives that value (as OpenVINO's CPU plugin does); AvgPool's
result there is not defined by OpenVINO, so such an AvgPool is refused.
"""
from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from ._common.shapes import dims_of, i64
from ._common.windows import same_pads_in_graph


def needs_graph_pads(axes) -> bool:
    """Some dynamic axis whose output size depends on its run-time size beyond floor rounding."""
    return any(a.size is None and a.rule != "floor" for a in axes)


def may_have_empty_window(a) -> bool:
    """Some run-time size gives a window that starts past the input (ceil rounding only)."""
    if a.size is not None:
        return a.has_empty_window
    return a.rule == "ceil" and a.stride - 1 + a.end >= a.span


def _axis_pads(g, x, axis: int, a) -> tuple[str, str]:
    """int64 1-D (begin, end) pads of spatial axis ``axis`` (constants on a static or floor axis)."""
    if a.size is not None:
        return i64(g, [a.begin]), i64(g, [a.onnx_end])
    if a.rule == "floor":
        return i64(g, [a.begin]), i64(g, [a.end])
    size = dims_of(g, x, axis + 2, axis + 3)
    s, k = i64(g, [a.stride]), i64(g, [a.span])
    zero = i64(g, [0])
    if a.rule in ("same_upper", "same_lower"):
        return same_pads_in_graph(g, x, axis, a.rule, a.span, a.stride)
    begin = i64(g, [a.begin])
    start = g.Add(size, begin)  # X + b: a window starting here holds end padding only
    room = g.Sub(g.Add(start, i64(g, [a.end])), k)
    last = g.Div(g.Add(room, i64(g, [a.stride - 1])), s)  # ceil(room / s) = n - 1
    if a.rule == "ceil_torch":
        last = g.Sub(last, g.Cast(g.GreaterOrEqual(g.Mul(last, s), start), to=7))
    return begin, g.Max(g.Sub(g.Add(g.Mul(last, s), k), start), zero)


def graph_padded(g, x, axes, fill) -> str:
    """``x`` padded with ``fill`` (a scalar initializer name) by the run-time pads of every axis."""
    pairs = [_axis_pads(g, x, i, a) for i, a in enumerate(axes)]
    zeros = i64(g, [0, 0])
    pads = g.Concat(zeros, *[p[0] for p in pairs], zeros, *[p[1] for p in pairs], axis=0)
    return g.Pad(x, pads, fill)


def window_counts(g, x, axes, etype) -> str:
    """Per window, the number of input elements in it divided by the kernel size, shaped
    [1, 1, spatial...] (an AveragePool over a padded mask of ones)."""
    ones = g.ConstantOfShape(g.Concat(i64(g, [1, 1]), dims_of(g, x, 2), axis=0),
                             value=_scalar_tensor(np.ones((1,), etype.numpy)))
    ones = g.value(ones, etype, (1, 1) + tuple(x.shape[2:]))
    zero = g.const(np.zeros((), etype.numpy), etype.numpy, "zero")
    return g.AveragePool(graph_padded(g, ones, axes, zero), kernel_shape=[a.kernel for a in axes],
                         strides=[a.stride for a in axes])


def _scalar_tensor(array: np.ndarray):
    return numpy_helper.from_array(array)
