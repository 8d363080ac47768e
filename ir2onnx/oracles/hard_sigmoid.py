"""Oracle of HardSigmoid-1 from the spec: ``max(0, min(1, alpha * x + beta))`` per element, in
float64, rounded once to the input's type (NaN stays NaN)."""
from __future__ import annotations

from ..errors import InvalidLayer
from .elements import map_float
from .registry import oracle


@oracle("HardSigmoid", "opset1")
def hard_sigmoid(layer, inputs):
    x, alpha, beta = inputs
    if alpha.size != 1 or beta.size != 1:
        raise InvalidLayer(layer, "alpha and beta must be scalars")
    a, b = float(alpha.reshape(-1)[0]), float(beta.reshape(-1)[0])
    return map_float(layer, x, lambda v: v if v != v else max(0.0, min(1.0, a * v + b)))  # NaN stays
