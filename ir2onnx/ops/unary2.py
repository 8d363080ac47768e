"""HSigmoid-5, SoftSign-9, Selu-1, Sign-1 and Round-5: element-wise ops of real OpenVINO IRs.

Small constant inputs are folded at convert time (float64, rounded once to the input type).

HSigmoid is the spec's formula ``Div(Clip(Add(x, 3), 0, 6), 6)`` rather than ONNX HardSigmoid
(alpha=1/6, beta=0.5): measured on 220k f32 values, the formula is within 1 ulp (5.96e-8) of
OpenVINO's CPU plugin, HardSigmoid within 2 ulps (1.19e-7); neither is bit-exact with it
(29% vs 33% of the values), and the formula also covers f64, which HardSigmoid lacks.

Round half_away_from_zero is ``r = Round(x)`` (half to even, exact), then ``r + Sign(x)`` where
``(x - r) * Sign(x) == 0.5`` (a tie rounded toward zero). It is exact for every value, unlike
``Sign(x) * Floor(Abs(x) + 0.5)``, whose ``+ 0.5`` rounds 0.49999997 to 1 and the odd integers in
[2^23, 2^24) up by one in f32 (OpenVINO's CPU plugin gives those wrong results; we follow the spec).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.inputs import FLOAT_TYPES, float_elementwise, float_input, foldable
from ..lowering.registry import lowers

INT_TYPES = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")


def _c(ctx, value, x) -> str:
    """A scalar constant in ``x``'s element type."""
    return ctx.b.const(np.asarray(value, x.etype.numpy), x.etype.numpy, "scalar")


def _name(x) -> str:
    return x.etype.name if x.etype is not None else "?"


@lowers("HSigmoid", "opset5")
def hsigmoid(ctx, layer, inputs):
    """HSigmoid-5 -> Add, Clip, Div: min(max(x + 3, 0), 6) / 6 (f16, f32, f64)."""
    g = ctx.b

    def emit(x):
        return g.Div(g.Clip(g.Add(x, _c(ctx, 3, x)), _c(ctx, 0, x), _c(ctx, 6, x)), _c(ctx, 6, x))

    return float_elementwise(ctx, layer, inputs, emit, lambda v: np.clip(v + 3, 0, 6) / 6)


@lowers("SoftSign", "opset9")
def softsign(ctx, layer, inputs):
    """SoftSign-9 -> Softsign (f16, f32); f64: Div(x, Add(Abs(x), 1))."""
    g = ctx.b

    def emit(x):
        if _name(x) == "f64":  # onnxruntime's Softsign has no double kernel
            return g.Div(x, g.Add(g.Abs(x), _c(ctx, 1, x)))
        return g.Softsign(x)

    return float_elementwise(ctx, layer, inputs, emit, lambda v: v / (1 + np.abs(v)))


def _scalar_param(layer, v, what: str, x) -> None:
    if v.etype != x.etype:
        raise InvalidLayer(layer, f"{what} must have the data's element type {_name(x)}, got {_name(v)}")
    if v.shape is not None and int(np.prod(v.shape, dtype=np.int64)) != 1:
        raise InvalidLayer(layer, f"{what} must hold exactly one element, got shape {list(v.shape)}")


def _selu64(v, alpha, lam):
    return lam * np.where(v > 0, v, alpha * np.expm1(v))


@lowers("Selu", "opset1")
def selu(ctx, layer, inputs):
    """Selu-1 (data, alpha, lambda) -> Selu(alpha, gamma) for constant alpha/lambda on f16/f32;
    else Mul(lambda, Where(Greater(x, 0), x, Mul(alpha, Sub(Exp(x), 1))))."""
    x, alpha, lam = inputs
    float_input(ctx, layer, x)
    _scalar_param(layer, alpha, "alpha", x)
    _scalar_param(layer, lam, "lambda", x)
    if foldable(x, alpha, lam):
        a, l_ = (float(np.asarray(v.value()).reshape(-1)[0]) for v in (alpha, lam))
        with np.errstate(all="ignore"):
            return [_selu64(x.value().astype(np.float64), a, l_).astype(x.etype.numpy)]
    g = ctx.b
    if alpha.is_const and lam.is_const and _name(x) != "f64":
        a, l_ = (float(np.asarray(v.value()).reshape(-1)[0]) for v in (alpha, lam))
        return [g.Selu(x, alpha=a, gamma=l_)]
    flat = [g.Reshape(v, g.const([], np.int64, "scalar_shape")) for v in (alpha, lam)]  # 0-D: keep x's shape
    neg = g.Mul(flat[0], g.Sub(g.Exp(x), _c(ctx, 1, x)))
    return [g.Mul(flat[1], g.Where(g.Greater(x, _c(ctx, 0, x)), x, neg))]


@lowers("Sign", "opset1")
def sign(ctx, layer, inputs):
    """Sign-1 -> Sign (floats and integers; NaN stays NaN, -0.0 gives 0.0 like OpenVINO).
    f16 goes through f32 (Cast, Sign, Cast): onnxruntime's f16 Sign turns NaN into 0."""
    x = inputs[0]
    name = _name(x)
    if name not in FLOAT_TYPES + INT_TYPES:
        raise UnsupportedLayer(layer, f"Sign on element type {name} is not supported "
                                      f"({', '.join(FLOAT_TYPES + INT_TYPES)})")
    ctx.onnx_type(layer, x.etype)
    if foldable(x):
        return [np.sign(x.value()).astype(x.etype.numpy) + np.zeros((), x.etype.numpy)]  # -0.0 -> 0.0
    if name == "f16":
        return [ctx.b.Cast(ctx.b.Sign(ctx.b.Cast(x, to=1)), to=x.etype.onnx)]
    return [ctx.b.Sign(x)]


def round_away(v: np.ndarray) -> np.ndarray:
    """Half away from zero, exactly (ties: |x - trunc(x)| == 0.5)."""
    t = np.trunc(v)
    return np.where(np.abs(v - t) == 0.5, t + np.sign(v), np.round(v))


@lowers("Round", "opset5")
def round5(ctx, layer, inputs):
    """Round-5 -> Round (half_to_even); half_away_from_zero: Round, Sub, Sign, Mul, Equal, Add,
    Where (exact for every value). Integer inputs pass through unchanged."""
    x = inputs[0]
    name = _name(x)
    if name in INT_TYPES:
        ctx.onnx_type(layer, x.etype)
        return [x]
    away = layer.attrs["mode"] == "half_away_from_zero"
    g = ctx.b

    def emit(v):
        r = g.Round(v)
        if not away:
            return r
        s = g.Sign(v)
        tie = g.Equal(g.Mul(g.Sub(v, r), s), _c(ctx, 0.5, v))  # exact: |x - r| <= 0.5, s is +-1 or 0
        return g.Where(tie, g.Add(r, s), r)

    return float_elementwise(ctx, layer, inputs, emit, round_away if away else np.round)
