"""HardSigmoid-1: ``max(0, min(1, alpha * x + beta))`` with alpha and beta as scalar inputs.

Constant alpha and beta -> ONNX HardSigmoid(alpha, beta) (attributes, f16 and f32: onnxruntime's
CPU kernels); f64, or alpha/beta known only at run time -> Mul, Add, Clip(0, 1) in the input's
type (the same two roundings as the formula).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from ..lowering.registry import lowers
from ._common.inputs import float_input, foldable


def _scalar_input(layer, v, what: str, etype) -> None:
    if v.etype != etype:
        raise InvalidLayer(layer, f"{what} is {v.etype.name} but data is {etype.name}")
    if v.shape is not None and int(np.prod(v.shape, dtype=np.int64)) != 1:
        raise InvalidLayer(layer, f"{what} must be a scalar, got shape {list(v.shape)}")


@lowers("HardSigmoid", "opset1")
def hard_sigmoid(ctx, layer, inputs):
    """HardSigmoid-1 (data, alpha, beta) -> HardSigmoid(alpha, beta) for constant alpha/beta on
    f16/f32, else Mul, Add, Clip(0, 1)."""
    x, alpha, beta = inputs
    float_input(ctx, layer, x)
    _scalar_input(layer, alpha, "alpha", x.etype)
    _scalar_input(layer, beta, "beta", x.etype)
    dtype = x.etype.numpy
    if foldable(x, alpha, beta):
        a, b = (np.asarray(v.value(), dtype).reshape(()) for v in (alpha, beta))
        return [np.clip(np.asarray(x.value(), dtype) * a + b, dtype.type(0), dtype.type(1)).astype(dtype)]
    g = ctx.b
    if alpha.is_const and beta.is_const and x.etype.name in ("f16", "f32"):
        a, b = (float(np.asarray(v.value()).reshape(-1)[0]) for v in (alpha, beta))
        return [g.HardSigmoid(x, alpha=a, beta=b)]
    flat = g.const(np.zeros(0, np.int64), np.int64, "scalar_shape")
    a, b = (v if v.shape == () else g.Reshape(v, flat) for v in (alpha, beta))
    zero, one = (g.const(np.array(v, dtype), dtype, "bound") for v in (0, 1))
    return [g.Clip(g.Add(g.Mul(x, a), b), zero, one)]
