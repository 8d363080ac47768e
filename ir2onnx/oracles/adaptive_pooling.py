"""Oracles of AdaptiveAvgPool-8 and AdaptiveMaxPool-8 from the spec, box by box: output position
``i`` of a spatial axis of size ``H`` pooled to ``O`` reads ``floor(i*H/O) .. ceil((i+1)*H/O)``
(end excluded); the average divides the box's sum by its element count; the max takes the
first largest element in row-major order inside the box and its index flattened over the
spatial dims of one (batch, channel) slice."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .registry import oracle


def _boxes(layer, x: np.ndarray, size):
    if x.dtype.kind != "f":
        raise UnsupportedLayer(layer, f"{layer.type} takes floats only")
    if not 3 <= x.ndim <= 5:
        raise InvalidLayer(layer, f"{layer.type} takes 3-D, 4-D or 5-D data")
    outs = [int(v) for v in np.asarray(size).reshape(-1)]
    if len(outs) != x.ndim - 2 or min(outs) < 1:
        raise InvalidLayer(layer, f"output_size {outs} does not fit data of shape {x.shape}")
    bounds = [[(math.floor(i * h / o), math.ceil((i + 1) * h / o)) for i in range(o)]
              for h, o in zip(x.shape[2:], outs)]
    return outs, bounds


def _box(bounds, pos):
    """The spatial positions of output position ``pos``, in row-major order."""
    return itertools.product(*[range(*bounds[a][p]) for a, p in enumerate(pos)])


@oracle("AdaptiveAvgPool", "opset8")
def adaptive_avg_pool8(layer, inputs):
    x, size = inputs
    outs, bounds = _boxes(layer, x, size)
    y = np.empty((*x.shape[:2], *outs), x.dtype)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for pos in itertools.product(*[range(o) for o in outs]):
            cells = [float(x[(n, c, *p)]) for p in _box(bounds, pos)]
            y[(n, c, *pos)] = sum(cells) / len(cells)
    return [y]


@oracle("AdaptiveMaxPool", "opset8")
def adaptive_max_pool8(layer, inputs):
    x, size = inputs
    outs, bounds = _boxes(layer, x, size)
    etype = layer.attrs.get("index_element_type") or "i64"
    etype = getattr(etype, "name", etype)
    y = np.empty((*x.shape[:2], *outs), x.dtype)
    idx = np.empty(y.shape, np.int32 if etype == "i32" else np.int64)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for pos in itertools.product(*[range(o) for o in outs]):
            best = None
            for p in _box(bounds, pos):
                if best is None or x[(n, c, *p)] > x[(n, c, *best)]:
                    best = p
            y[(n, c, *pos)] = x[(n, c, *best)]
            idx[(n, c, *pos)] = np.ravel_multi_index(best, x.shape[2:])
    return [y, idx]
