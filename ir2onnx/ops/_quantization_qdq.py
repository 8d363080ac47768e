"""FakeQuantize as QuantizeLinear -> DequantizeLinear (``--quantized qdq`` / ``qdq-symmetric``).

A FakeQuantize with constant ranges is an 8-bit affine quantization when

* activations: ``levels`` is 256, ``input_low == output_low`` and ``input_high == output_high``,
  ``il < ih``, the ranges are per tensor, and the zero point ``-il / s`` with
  ``s = (ih - il) / 255`` (the kernel's f32 output step) is an integer in [0, 255] (within 1e-3 of
  a level: NNCF aligns ranges so that zero is a level). Then FakeQuantize is
  ``(clamp(round(x/s) + zp, 0, 255) - zp) * s``, QuantizeLinear -> DequantizeLinear (u8, or i8
  with zero point 0 when ``zp`` is 128 under ``qdq-symmetric``). Each element equals the exact
  emulation's or is one step ``s`` from it where ``x`` is within f32 rounding of a level's tie
  (``x/s + zp`` and the kernel's ``x*isc + ish`` round differently), and the output value
  differs by a few ulps (``(q - zp) * s`` vs ``q*s + il``).
* weights (X a Const, or Const -> Convert): any ``levels`` <= 256 and any input range; the levels
  ``q`` are computed at convert time by the exact kernel arithmetic and stored as int8
  ``q - levels//2`` (an int8 initializer), dequantized per output channel (the axis the ranges
  vary along) with scale ``osc = (oh - ol)/(levels-1)`` and zero point ``-ol/osc - levels//2``,
  which must be an integer (within 1e-3): 0 for symmetric weights. The initializer is stored in
  the layout its consumer needs (MatMul transpose_b: transposed; GroupConvolution: its filters
  ``[G, C/G, ...]`` as ``[C, ...]``, where ranges along ``G`` and ``C/G`` become one axis), so
  DequantizeLinear feeds the MatMul / Conv directly, as onnxruntime's int8 fusions require. The output equals the exact
  emulation within one rounding of ``(q - zp)*osc`` vs ``fma(q, osc, ol)``.

Anything else returns None and stays in the exact float emulation. That includes activations
quantized per channel (ranges ``[1, C, 1, 1]`` after a Convolution, as Open Model Zoo's FP16-INT8
IRs have them): ONNX's per-axis QuantizeLinear expresses them, but onnxruntime's default graph
optimizations fuse the Q/DQ around a Conv, AveragePool, GroupConvolution, Sigmoid or MatMul into
QLinearConv, QLinearAveragePool, QLinearSigmoid or MatMulIntegerToFloat, whose kernels take
only scalar activation scales and zero points, and the model fails when it runs. Under ``qdq-symmetric`` a
non-zero zero point does not fit either (counted as not symmetric).
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..ir.element_types import TYPES
from ..lowering.builder import LazyValue

_F32 = TensorProto.FLOAT
_ZP_SLACK = 1e-3  # how far (in levels) a zero point may be from an integer


def _one_axis(shape_x: int, arrays) -> int | None | bool:
    """The axis of X (rank ``shape_x``) the arrays vary along: None for per tensor, False when
    they vary along several axes (or X's rank is unknown)."""
    axes = {shape_x - a.ndim + i for a in arrays for i, d in enumerate(a.shape) if d != 1}
    if not axes:
        return None
    return axes.pop() if len(axes) == 1 else False


def _per_axis(a: np.ndarray, axis: int | None, rank: int) -> np.ndarray:
    """``a`` (broadcastable to rank ``rank``) as a scalar or a 1-D vector along ``axis``."""
    if axis is None:
        return a.reshape(-1)[0]
    full = a.reshape((1,) * (rank - a.ndim) + a.shape)
    return full.reshape(-1)


def _count(ctx, key: str) -> None:
    ctx.stats[key] = ctx.stats.get(key, 0) + 1


def _const_source(ctx, layer):
    """X's values when X is a Const or a Convert of a Const (f16-compressed weights), else None."""
    src, _ = ctx.graph.producer(layer, 0)
    if src.type == "Convert":
        src, _ = ctx.graph.producer(src, 0)
    return src.const.array() if src.type == "Const" and src.const is not None else None


def weights(ctx, layer, x, ranges, levels, kernel_params, kernel_levels):
    """Const X: int8 initializer + DequantizeLinear, or None when it does not fit."""
    values = _const_source(ctx, layer)
    if values is None or levels > 256 or x.shape is None:
        return None
    params = kernel_params(*ranges, levels)
    osc, ol = params[4], params[5]
    if not np.all(np.isfinite(osc)) or np.any(osc <= 0):
        return None
    zp_real = -ol.astype(np.float64) / osc.astype(np.float64)
    zp = np.rint(zp_real)
    if np.any(np.abs(zp_real - zp) > _ZP_SLACK):
        return None
    offset = levels // 2
    z = (zp - offset).astype(np.int64)
    if np.any(z < -128) or np.any(z > 127):
        return None
    if ctx.quantized == "qdq-symmetric" and np.any(z != 0):
        _count(ctx, "fq_not_symmetric")
        return None
    q = kernel_levels(values, params) - offset  # the exact kernel's levels, as int8
    rank = q.ndim
    pad = lambda a: np.asarray(a).reshape((1,) * (rank - np.ndim(a)) + np.shape(a))  # noqa: E731
    scale = np.broadcast_to(pad(np.asarray(osc, np.float32)), q.shape)
    out = _dequantized(ctx, layer, q, scale, np.broadcast_to(pad(z), q.shape), x.etype.name == "f32")
    if out is not None:  # None: ranges along non-neighbouring axes, no per-axis form
        _count(ctx, "fq_weights")
    return out


def _varying(scale, zero) -> list[int]:
    """The axes along which the full ``scale`` / ``zero`` arrays change."""
    return [i for i in range(scale.ndim) if scale.shape[i] > 1 and not (
        np.all(scale == scale.take([0], axis=i)) and np.all(zero == zero.take([0], axis=i)))]


def _per_axis_form(scale, zero, axes):
    """(axis or None, 1-D/scalar scale, zero) for full arrays varying along ``axes`` (<= 1)."""
    if not axes:
        return None, scale.reshape(-1)[0], zero.reshape(-1)[0]
    index = tuple(slice(None) if i == axes[0] else 0 for i in range(scale.ndim))
    return axes[0], np.asarray(scale[index], order="C"), np.asarray(zero[index], order="C")


def _dequantized(ctx, layer, q, scale, zero, movable: bool):
    """A LazyValue: DequantizeLinear of the int8 levels ``q`` (``scale``/``zero``: full arrays of
    q's shape). It offers ``transposed`` and ``reshaped`` (MatMul's transpose_b, GroupConvolution's
    filter Reshape), which store the int8 initializer in that layout instead of adding a node:
    onnxruntime fuses DequantizeLinear -> MatMul/Conv into int8 kernels only when adjacent."""
    b = ctx.b
    axes = _varying(scale, zero)
    if axes and axes[-1] - axes[0] + 1 != len(axes):
        return None  # a layout that scatters the channels: the caller keeps its own node

    def emit() -> str:
        data, target, s, z, vary = q, None, scale, zero, axes
        if len(axes) > 1:  # neighbouring axes vary: per axis on them flattened, then Reshape back
            lo, hi = axes[0], axes[-1]
            flat = (int(np.prod(q.shape[:lo])), int(np.prod(q.shape[lo:hi + 1])), int(np.prod(q.shape[hi + 1:])))
            data, target = q.reshape(flat), q.shape
            s, z, vary = np.asarray(scale, order="C").reshape(flat), np.asarray(zero, order="C").reshape(flat), [1]
        axis, s, z = _per_axis_form(s, z, vary)
        stored = b.add_initializer(np.asarray(data, order="C").astype(np.int8), TYPES["i8"], f"{layer.name}_int8")
        inputs = [stored, b.const(s, np.float32, "fq_scale")]
        if np.any(z != 0):
            inputs.append(b.const(z, np.int8, "fq_zero_point"))
        out = b.DequantizeLinear(*inputs, axis=axis)
        return out if target is None else b.Reshape(out, b.const(list(target)))

    out = LazyValue(b, TYPES["f32"], tuple(q.shape), emit)
    if movable:
        out.transposed = lambda perm: _dequantized(
            ctx, layer, q.transpose(perm), scale.transpose(perm), zero.transpose(perm), False)
        out.reshaped = lambda shape: _dequantized(
            ctx, layer, q.reshape(shape), np.asarray(scale, order="C").reshape(shape),
            np.asarray(zero, order="C").reshape(shape), False)
    return out


def activations(ctx, layer, x, ranges, levels, kernel_params):
    """Run-time X: QuantizeLinear -> DequantizeLinear, or None when it does not fit."""
    il, ih, ol, oh = (np.asarray(r, np.float32) for r in ranges)
    if levels != 256 or x.shape is None or not (np.array_equal(il, ol) and np.array_equal(ih, oh)):
        return None
    if np.any(il >= ih):
        return None
    s = kernel_params(il, ih, ol, oh, levels)[4]
    if not np.all(np.isfinite(s)) or np.any(s <= 0):
        return None
    zp_real = -il.astype(np.float64) / s.astype(np.float64)
    zp = np.rint(zp_real)
    if np.any(np.abs(zp_real - zp) > _ZP_SLACK) or np.any(zp < 0) or np.any(zp > 255):
        return None
    axis = _one_axis(len(x.shape), [s, zp])
    if axis is False:
        return None
    if axis is not None:  # onnxruntime's int8 kernels take per-tensor activations only
        _count(ctx, "fq_per_channel_activations")
        return None
    shape = np.broadcast_shapes(s.shape, zp.shape)
    scale = _per_axis(s * np.ones(shape, np.float32), axis, len(x.shape))
    zp = _per_axis(zp * np.ones(shape), axis, len(x.shape))
    if ctx.quantized == "qdq-symmetric":
        if np.any(zp != 128):
            _count(ctx, "fq_not_symmetric")
            return None
        zero = np.zeros_like(zp, dtype=np.int8)
    else:
        zero = np.asarray(zp, np.uint8)
    b = ctx.b
    xf = x if x.etype.name == "f32" else b.Cast(x, to=_F32)
    s_name = b.const(scale, np.float32, "fq_scale")
    z_name = b.const(zero, zero.dtype, "fq_zero_point")
    attrs = {} if axis is None else {"axis": axis}
    q = b.QuantizeLinear(xf, s_name, z_name, **attrs)
    return b.DequantizeLinear(q, s_name, z_name, **attrs)
