"""Convert-1 and ConvertLike-1 -> Cast (folded for small constants and for source types ONNX lacks).

A Convert to f8e4m3 or f8e5m2 rounds to nearest even, and a value that rounds past the largest
finite f8 becomes NaN (f8e4m3fn) or infinity (f8e5m2): Abs, Greater, Mul, Where, Cast(saturate=0),
see :func:`_to_float8`. (OpenVINO's CPU plugin rounds f32 to f16 first, and that double rounding
differs from the single one on about 0.2% of random f32 values; ONNX's and torch's casts round
once, as ir2onnx does.)

OpenVINO's FP16 weight compression (an f16 Const -> Convert f32) keeps the f16 initializer and a
Cast: the file stays half size, and the Cast is emitted lazily, only when a consumer reads the
converted tensor (RNN weights reordered at convert time read the Const itself). ConvertLike is
Convert-1 with the destination type taken from the second input (Convert-1's own lowering runs,
so the conversion rules live in one place). A constant is folded with the oracles'
:func:`~ir2onnx.oracles.conversion.convert_array`, the spec's conversion rule.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.builder import LazyValue, Value
from ..lowering.registry import lowers
from ..oracles.conversion import convert_array

_F32 = 1  # onnx.TensorProto.FLOAT

# A Convert of a constant at most this many elements is folded at convert time; bigger ones
# (OpenVINO's compressed f16 weights) keep the narrow initializer and a Cast, see docs/fp16-weights.md.
FOLD_CONVERT_ELEMENTS = 4096


@lowers("Convert", "opset1")
def convert(ctx, layer, inputs):
    """Convert-1 -> Cast (folded for small constants and for source types ONNX lacks).

    OpenVINO's FP16 weight compression (f16 Const -> Convert f32) keeps the f16 initializer and a
    Cast: the file stays half size and the weights are never held twice while converting.
    """
    x = inputs[0]
    dst = layer.attrs["destination_type"]
    if dst.numpy is None or dst.onnx is None:
        raise UnsupportedLayer(layer, f"conversion to {dst.name} has no ONNX counterpart")
    if x.etype == dst:
        return [x]
    src_ok = x.etype.onnx is not None and x.etype.min_opset <= ctx.opset
    if x.is_const and (not src_ok or np.prod(x.shape, dtype=np.int64) <= FOLD_CONVERT_ELEMENTS):
        ctx.onnx_type(layer, dst)
        return [Value(ctx.b, dst, x.shape, const=lambda: convert_array(x.value(), dst.numpy), hint=layer.name)]
    ctx.onnx_type(layer, x.etype)
    # a Value, not a bare name: OpenVINO sometimes writes the source precision on the output port
    # of a decompression Convert; destination_type is the truth
    to = ctx.onnx_type(layer, dst)
    if dst.name in _F8_OVERFLOW:
        return [Value(ctx.b, dst, x.shape, name=_to_float8(ctx, x, dst, to))]
    if x.is_const:  # lazy: a consumer that reads the Const itself (RNN weights reordered at
        # convert time) leaves no dead Cast and no second copy of the weights in the file
        return [_lazy_cast(ctx, x, dst, to)]
    return [Value(ctx.b, dst, x.shape, name=ctx.b.Cast(x, to=to))]


# |x| from which a value rounds past the largest f8 (448: 464 is the tie, kept by round-to-even;
# 57344: 61440 is the tie, which rounds up to infinity)
_F8_OVERFLOW = {"f8e4m3": (464.0, False), "f8e5m2": (61440.0, True)}


def _to_float8(ctx, x, dst, to) -> str:
    """Where(|x| > 464 (f8e4m3) / >= 61440 (f8e5m2), x * inf, x) -> Cast(saturate=0): values that
    round past the largest f8 become NaN (f8e4m3fn has no infinity) or a signed infinity, as
    OpenVINO's Convert and ONNX's Cast(saturate=0) define it. onnxruntime 1.32's Cast(saturate=0)
    alone gives 448 for 480 and NaN (not infinity) for f8e5m2 from 61440 up; below the threshold
    it rounds to nearest even, and inf and NaN it maps as the definition does."""
    g = ctx.b
    limit, inclusive = _F8_OVERFLOW[dst.name]
    src = x.etype.name
    if src not in ("f16", "f32", "f64"):  # integers, bf16, f8: exact in f32 below the threshold
        x, src = g.Cast(x, to=_F32), "f32"
    ftype = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[src]
    big = (g.GreaterOrEqual if inclusive else g.Greater)(g.Abs(x), g.const(ftype(limit), ftype, "f8_limit"))
    wide = g.Where(big, g.Mul(x, g.const(ftype(np.inf), ftype, "inf")), x)
    return g.Cast(wide, to=to, saturate=0)


def _lazy_cast(ctx, x: Value, dst, to: int) -> LazyValue:
    """Cast of the constant ``x``, emitted when read; ``reshaped(shape)`` gives the Cast of the
    same bytes under another shape (an Add's [1, 1, 1, C] bias as [C]: onnxruntime's broadcast
    of a trailing vector is its fast path), still streamed from the .bin."""
    out = LazyValue(ctx.b, dst, x.shape, lambda: ctx.b.Cast(x, to=to))

    def reshaped(shape):
        if x._source is None or int(np.prod(shape, dtype=np.int64)) != int(np.prod(x.shape, dtype=np.int64)):
            return None
        src = dataclasses.replace(x._source, shape=tuple(shape))
        y = Value(ctx.b, x.etype, tuple(shape), const=src.array, source=src, hint=x._hint)
        return _lazy_cast(ctx, y, dst, to)

    out.reshaped = reshaped
    return out


@lowers("ConvertLike", "opset1")
def convert_like(ctx, layer, inputs):
    """ConvertLike-1 -> Cast to the like-input's type (Convert-1's lowering: folded for small
    constants and for source types ONNX lacks); the like-input's values are never read."""
    data, like = inputs
    if like.etype is None:
        raise InvalidLayer(layer, "the like input has no element type")
    as_convert = dataclasses.replace(layer, attrs={**layer.attrs, "destination_type": like.etype})
    return convert(ctx, as_convert, [data])
