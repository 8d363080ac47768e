"""Oracle of MVN-6, from the spec: for every slice over ``axes``, subtract the mean and (with
normalize_variance) divide by sqrt(var + eps) or sqrt(var) + eps; float64, rounded once."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


@oracle("MVN", "opset6")
def mvn6(layer, inputs):
    data, axes = inputs
    rank = data.ndim
    raw = [int(a) for a in np.asarray(axes).reshape(-1)]
    if any(not -rank <= a < rank for a in raw):
        raise InvalidLayer(layer, f"axes {raw} out of range for rank {rank}")
    reduced = {a % rank for a in raw}
    if len(reduced) != len(raw):
        raise InvalidLayer(layer, f"axes {raw} name a dimension twice")
    normalize = bool(layer.attrs["normalize_variance"])
    eps = float(layer.attrs["eps"])
    inside = str(layer.attrs["eps_mode"]).lower() == "inside_sqrt"
    v = data.astype(np.float64)
    out = np.empty(data.shape, np.float64)
    if data.size == 0:  # no slice to normalize (and no element count to divide by)
        return [out.astype(data.dtype)]
    outer = [range(d) if i not in reduced else [None] for i, d in enumerate(data.shape)]
    for base in itertools.product(*outer):
        inner = [range(data.shape[i]) if p is None else [p] for i, p in enumerate(base)]
        idx = list(itertools.product(*inner))
        mean = math.fsum(v[i] for i in idx) / len(idx)
        var = math.fsum((v[i] - mean) ** 2 for i in idx) / len(idx)
        denom = 1.0
        if normalize:
            denom = math.sqrt(var + eps) if inside else math.sqrt(var) + eps
        for i in idx:
            out[i] = (v[i] - mean) / denom
    return [out.astype(data.dtype)]
