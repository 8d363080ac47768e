"""The sliding-window attributes that Convolution and the pooling ops share: per-axis ints
(strides, dilations, kernel, pads) and OpenVINO's same_upper / same_lower padding rule (at convert
time, or in the graph from a dynamic dim: :func:`same_pads_in_graph`)."""
from __future__ import annotations

from ...errors import InvalidLayer, UnsupportedLayer
from .shapes import dims_of, i64


def attr_ints(layer, name: str, rank: int, minimum: int) -> list[int]:
    """An ints attribute of exactly ``rank`` values, each >= ``minimum``."""
    values = list(layer.attrs.get(name) or [])
    if len(values) != rank:
        raise InvalidLayer(layer, f"{name} has {len(values)} values, a {rank}-D op needs {rank}")
    if any(v < minimum for v in values):
        raise InvalidLayer(layer, f"{name}={values}: every value must be >= {minimum}")
    return values


def same_pads(layer, mode: str, size: int | None, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    """(begin, end) padding of one axis for auto_pad same_upper / same_lower (OpenVINO's rule)."""
    span = (kernel - 1) * dilation + 1
    if size is None:
        if stride != 1:
            raise UnsupportedLayer(layer, f"auto_pad={mode} with stride {stride} on a dynamic spatial "
                                          "dim: the padding is only known at run time")
        total = span - 1
    else:
        total = max((-(-size // stride) - 1) * stride + span - size, 0)
    small, large = total // 2, total - total // 2
    return (small, large) if mode == "same_upper" else (large, small)


def same_pads_in_graph(g, x, axis: int, mode: str, span: int, stride: int) -> tuple[str, str]:
    """int64 [1] (begin, end) pads of spatial ``axis`` (dim ``axis + 2`` of ``x``) by the rule of
    :func:`same_pads`, computed from the run-time size X: n = ceil(X / s),
    total = max((n - 1) * s + span - X, 0)."""
    size = dims_of(g, x, axis + 2, axis + 3)
    s = i64(g, [stride])
    n = g.Div(g.Add(size, i64(g, [stride - 1])), s)
    total = g.Max(g.Sub(g.Add(g.Mul(g.Sub(n, i64(g, [1])), s), i64(g, [span])), size), i64(g, [0]))
    small = g.Div(total, i64(g, [2]))
    large = g.Sub(total, small)
    return (small, large) if mode == "same_upper" else (large, small)
