"""Element-wise binary arithmetic: Add, Subtract, Multiply, Divide, Maximum, Minimum, FloorMod,
Mod, SquaredDifference and Power (all -1), numpy/none broadcasting.

Small constant operands are folded at convert time (numpy, wrapping integer arithmetic like
OpenVINO), so static models keep constant Reshape shapes; everything else becomes ONNX nodes.
FloorMod (the sign of the divisor, Python's %): integers -> Mod(fmod=0); floats ->
Sub(a, Mul(Floor(Div(a, b)), b)), OpenVINO's formula. Mod (the sign of the dividend, C's fmod):
Mod(fmod=1). SquaredDifference: Sub, Mul. A constant operand loses the leading 1-dims that
broadcasting makes no use of (:func:`_trimmed`), so onnxruntime's fusions recognise RMSNorm.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.builder import LazyValue, Value
from ..lowering.registry import lowers
from . import _rms_norm as rms_norm, _rotary as rotary
from ._channel_affine import scaled
from ._common.inputs import FLOAT_TYPES, foldable, INT_TYPES
from ._common.integer_division import trunc_divide
from ._common.integer_power import integer_power_chain

_INT32 = 6  # TensorProto.INT32
TRIM_ELEMENTS = 1 << 16  # larger constants keep their shape (and their bytes stay in the .bin)


def _check_operands(layer, a, b) -> None:
    """Same element type; shapes compatible under ``auto_broadcast`` (where they are known)."""
    if a.etype is None or b.etype is None:  # (fuzz case 3240: an exit 3 before)
        raise InvalidLayer(layer, "the element type of an operand is unknown: the port that makes it has no "
                                  "precision (or UNDEFINED)")
    if a.etype != b.etype:
        raise InvalidLayer(layer, f"operands have different element types ({a.etype.name} and {b.etype.name})")
    if a.etype.name in ("boolean", "string") or a.etype.numpy is None:
        raise UnsupportedLayer(layer, f"arithmetic on element type {a.etype.name} has no ONNX counterpart")
    mode = layer.attrs.get("auto_broadcast", "numpy")
    if mode == "pdpd":
        raise UnsupportedLayer(layer, "auto_broadcast='pdpd' is not supported (only 'numpy' and 'none')")
    if a.shape is None or b.shape is None:
        return
    if mode == "none":
        same_rank = len(a.shape) == len(b.shape)
        if not same_rank or any(x is not None and y is not None and x != y for x, y in zip(a.shape, b.shape)):
            raise InvalidLayer(layer, f"auto_broadcast='none' needs equal shapes, got {list(a.shape)} "
                                      f"and {list(b.shape)}")
        return
    for x, y in zip(reversed(a.shape), reversed(b.shape)):
        if x is not None and y is not None and x != y and 1 not in (x, y):
            raise InvalidLayer(layer, f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast (numpy rules)")


def _fold(fn, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out = np.asarray(fn(a, b))
    return out.astype(a.dtype, copy=False)


def _scalars(a, b):
    """The operands with the leading 1-dims of a constant dropped where its rank is at most the
    other's (the result's shape is the same): a one-element constant becomes a scalar, [1, 1, C]
    becomes [C]. onnxruntime's fusions read epsilon and Gelu constants as scalars and
    SimplifiedLayerNormalization's scale as a 1-D tensor."""
    def trimmed(c, other):
        if c.shape is None or other.shape is None or len(c.shape) > len(other.shape) or None in c.shape:
            return c
        lead = next((i for i, d in enumerate(c.shape) if d != 1), len(c.shape))
        if lead == 0:
            return c
        shape = tuple(c.shape[lead:])
        if not c.is_const:  # a Cast of a constant (an f16 weight) that can take another shape
            return (getattr(c, "reshaped", None) or (lambda s: None))(shape) or c
        if int(np.prod(c.shape)) > TRIM_ELEMENTS:
            return c
        return Value(c._b, c.etype, shape, const=lambda: np.asarray(c.value()).reshape(shape), hint=c._hint)
    return trimmed(a, b), trimmed(b, a)


def _broadcast(a, b):
    """numpy broadcasting of two partial shapes (None: unknown)."""
    if a.shape is None or b.shape is None:
        return None
    sa, sb = a.shape, b.shape
    n = max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    return tuple(x if y == 1 else y if x == 1 else x if x is not None else y for x, y in zip(sa, sb))


def _reciprocal(ctx, a, b):
    """1 / b as a value that a following Multiply(x, 1 / b) takes as Div(x, b): OpenVINO writes
    rsqrt as Divide(1, Sqrt), and onnxruntime's SimplifiedLayerNormalization fusion (RMSNorm)
    looks for Div(x, Sqrt(...)). One rounding instead of two."""
    g = ctx.b
    out = LazyValue(g, b.etype, _broadcast(a, b), lambda: g.Div(*_scalars(a, b)))
    out.absorb_mul = lambda other: (Value(g, b.etype, _broadcast(other, out), name=g.Div(other, b))
                                    if other.etype == b.etype else None)
    out.divisor = b
    return out


def _product(a, b) -> str:
    return a._b.Mul(*_scalars(a, b))


def _binary(ctx, layer, inputs, onnx_op: str, fold):
    a, b = inputs
    _check_operands(layer, a, b)
    if foldable(a, b):
        return [_fold(fold, a.value(), b.value())]
    return [ctx.b.op(onnx_op, *_scalars(a, b))]


@lowers("Add", "opset1")
def add(ctx, layer, inputs):
    """Add-1 -> Add (folded for small constants; absorbed by a producer that offers ``absorb_add``,
    e.g. a ConvTranspose taking the bias, a LayerNormalization taking beta; ``--target onnx`` at
    opset >= 23: the end of a rotary embedding as RotaryEmbedding, :mod:`._rotary`)."""
    a, b = inputs
    _check_operands(layer, a, b)
    if foldable(a, b):
        return [_fold(np.add, a.value(), b.value())]
    rotary_embedding = rotary.standard(ctx, layer) if a.etype.name == "f32" else None
    if rotary_embedding is not None:
        return [rotary_embedding]
    for x, other in ((a, b), (b, a)):
        absorb = getattr(x, "absorb_add", None)
        if absorb is not None:
            merged = absorb(other)
            if merged is not None:
                return [merged]
    return [ctx.b.Add(*_scalars(a, b))]


@lowers("Subtract", "opset1")
def subtract(ctx, layer, inputs):
    """Subtract-1 -> Sub."""
    return _binary(ctx, layer, inputs, "Sub", np.subtract)


def _standard_rms(ctx, layer, x, k: int):
    """RMSNormalization-23 for the ``onnx`` target at opset >= 23, where the norm is exact (:mod:`.rms_norm`)."""
    if not ctx.target.opset23_forms or ctx.opset < 23:
        return None
    eps = rms_norm.epsilon(ctx, layer, k)
    return None if eps is None else rms_norm.standard(ctx, x, eps)


@lowers("Multiply", "opset1")
def multiply(ctx, layer, inputs):
    """Multiply-1 -> Mul (absorbed by a producer that offers ``absorb_mul``, e.g. a
    LayerNormalization taking gamma as its scale; RMSNorm's x * rsqrt: :mod:`.rms_norm`)."""
    a, b = inputs
    _check_operands(layer, a, b)
    if not foldable(a, b):
        k = rms_norm.x_operand(ctx, layer) if a.etype.is_float else None
        divisor = getattr(inputs[1 - k], "divisor", None) if k is not None else None
        out = _standard_rms(ctx, layer, inputs[k], k) if divisor is not None else None
        out = rms_norm.normalized(ctx, inputs[k], divisor, _product) if divisor is not None and out is None else out
        if out is not None:  # RMSNorm's x * (1 / Sqrt): Div, and a Mul by ones that onnxruntime fuses
            return [out]
        for x, other in ((a, b), (b, a)):
            absorb = getattr(x, "absorb_mul", None)
            merged = absorb(other) if absorb is not None else None
            if merged is not None:
                return [merged]
        for x, other in ((a, b), (b, a)):
            lazy = scaled(ctx, x, other) if not x.is_const else None
            if lazy is not None:  # a following per-channel Add makes it a BatchNormalization
                return [lazy]
    return _binary(ctx, layer, inputs, "Mul", np.multiply)


@lowers("Divide", "opset1")
def divide(ctx, layer, inputs):
    """Divide-1 -> Div (RMSNorm's Divide: Div, Mul by ones or by the next Multiply's constant,
    :mod:`.rms_norm`). Integers truncate toward zero with either m_pythondiv: OpenVINO's ONNX and
    PyTorch frontends write ONNX Div and torch's trunc division as Divide(m_pythondiv=true) and
    rely on that (onnxruntime and torch truncate, and so does OpenVINO's runtime); torch's floor
    division is Floor(Divide), whose Floor floor-divides the operands (:mod:`ir2onnx.ir.idioms`)."""
    a, b = inputs
    _check_operands(layer, a, b)
    if (not a.etype.is_integer and a.is_const and not b.is_const and a.shape is not None
            and int(np.prod(a.shape)) == 1 and float(np.asarray(a.value()).reshape(())) == 1.0):
        return [_reciprocal(ctx, a, b)]
    if not a.etype.is_integer and not foldable(a, b) and rms_norm.x_operand(ctx, layer) == 0:
        out = _standard_rms(ctx, layer, a, 0) or rms_norm.normalized(ctx, a, b, _product)
        if out is not None:  # RMSNorm: a Mul by ones that onnxruntime fuses (see rms_norm)
            return [out]
    if not a.etype.is_integer:
        return _binary(ctx, layer, inputs, "Div", np.divide)
    if foldable(a, b):
        bv = b.value()
        if np.any(bv == 0):
            raise InvalidLayer(layer, "integer division by zero in constant operands")
        return [_fold(trunc_divide, a.value(), bv)]
    return [ctx.b.Div(a, b)]


def _minmax(ctx, layer, inputs, onnx_op: str, fold):
    a, b = inputs
    _check_operands(layer, a, b)
    if foldable(a, b) or a.etype.name not in ("i16", "u16"):
        return _binary(ctx, layer, inputs, onnx_op, fold)
    # onnxruntime's CPU Max/Min lack 16-bit integers; i32 holds both exactly.
    g = ctx.b
    out = g.op(onnx_op, g.Cast(a, to=_INT32), g.Cast(b, to=_INT32))
    return [g.Cast(out, to=a.etype.onnx)]


@lowers("Maximum", "opset1")
def maximum(ctx, layer, inputs):
    """Maximum-1 -> Max (16-bit integers: Cast, Max, Cast)."""
    return _minmax(ctx, layer, inputs, "Max", np.maximum)


@lowers("Minimum", "opset1")
def minimum(ctx, layer, inputs):
    """Minimum-1 -> Min (16-bit integers: Cast, Min, Cast)."""
    return _minmax(ctx, layer, inputs, "Min", np.minimum)


# -- FloorMod, Mod, SquaredDifference --------------------------------------------------------
def _operands(ctx, layer, inputs, allowed):
    a, b = inputs
    _check_operands(layer, a, b)
    if a.etype.name not in allowed:
        raise UnsupportedLayer(layer, f"{layer.type} on {a.etype.name} is not supported ({', '.join(allowed)})")
    ctx.onnx_type(layer, a.etype)
    return a, b


@lowers("FloorMod", "opset1")
def floor_mod(ctx, layer, inputs):
    """FloorMod-1 -> Mod(fmod=0) for integers; Div, Floor, Mul, Sub for floats."""
    a, b = _operands(ctx, layer, inputs, INT_TYPES + FLOAT_TYPES)
    g = ctx.b
    if a.etype.name in INT_TYPES:
        if foldable(a, b) and not np.any(b.value() == 0):
            return [_fold(np.mod, a.value(), b.value())]
        return [g.Mod(a, b, fmod=0)]
    if foldable(a, b):
        return [_fold(lambda x, y: x - np.floor(x / y) * y, a.value(), b.value())]
    return [g.Sub(a, g.Mul(g.Floor(g.Div(a, b)), b))]


@lowers("Mod", "opset1")
def mod(ctx, layer, inputs):
    """Mod-1 -> Mod(fmod=1) (the remainder takes the dividend's sign)."""
    a, b = _operands(ctx, layer, inputs, INT_TYPES + FLOAT_TYPES)
    if foldable(a, b) and not (a.etype.name in INT_TYPES and np.any(b.value() == 0)):
        return [_fold(np.fmod, a.value(), b.value())]
    return [ctx.b.Mod(a, b, fmod=1)]


@lowers("SquaredDifference", "opset1")
def squared_difference(ctx, layer, inputs):
    """SquaredDifference-1 -> Sub, Mul: (a - b)^2."""
    a, b = _operands(ctx, layer, inputs, ("i32", "i64") + FLOAT_TYPES)
    if foldable(a, b):
        return [_fold(lambda x, y: (x - y) * (x - y), a.value(), b.value())]
    d = ctx.b.Sub(a, b)
    return [ctx.b.Mul(d, d)]


# -- Power -----------------------------------------------------------------------------------
def _int_power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer power (wrapping); a negative exponent truncates toward zero: 0 except for bases
    1 and -1, as C++ ``(T)std::pow(a, b)`` in OpenVINO's reference."""
    a, b = np.broadcast_arrays(a, b)
    out = np.empty(a.shape, a.dtype)
    bits = a.dtype.itemsize * 8
    for i, (x, y) in enumerate(zip(a.reshape(-1).tolist(), b.reshape(-1).tolist())):
        r = pow(x, y, 1 << bits) if y >= 0 else (x if abs(x) == 1 and y % 2 else (1 if abs(x) == 1 else 0))
        r %= 1 << bits
        if a.dtype.kind == "i" and r >= 1 << (bits - 1):
            r -= 1 << bits
        out.reshape(-1)[i] = r
    return out


@lowers("Power", "opset1")
def power(ctx, layer, inputs):
    """Power-1 -> Pow (floats; numpy/none broadcast; constants folded); integers (every width,
    signed and unsigned) -> square and multiply on the exponent's bits in int64 (Where, Mul;
    BitShift for a run-time exponent), Cast back: wrapping like PyTorch."""
    a, b = inputs
    _check_operands(layer, a, b)
    if foldable(a, b):
        if a.etype.is_integer:
            return [_int_power(a.value(), b.value())]
        with np.errstate(all="ignore"):
            return [np.power(a.value().astype(np.float64), b.value().astype(np.float64)).astype(a.etype.numpy)]
    if a.etype.name in INT_TYPES:
        return [integer_power_chain(ctx.b, a, b)]
    if a.etype.name not in FLOAT_TYPES:
        raise UnsupportedLayer(layer, f"Power on element type {a.etype.name} is not supported")
    return [ctx.b.Pow(*_scalars(a, b))]
