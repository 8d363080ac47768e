"""The response normalizations: LRN-1 (local, over a window of constant axes) and GRN-1 (global,
across the channels).

LRN-1: y = x / (bias + alpha / size^len(axes) * sum(x^2 over the box))^beta, where the box spans
[i - (size-1)/2, i + (size-1)/2] (clipped to the tensor) along every axis in ``axes`` and is the
element itself along the others.
* axes [1] on 4-D f32/f16 data -> ONNX LRN (the same window and formula for odd sizes; f16 is
  computed in f32 between two Casts; onnxruntime's LRN kernel takes 4-D float only).
* any other constant axes (or rank, or f64) -> Mul (x^2), Pad (zeros, (size-1)/2 each side of
  every axis), then per axis the sum of ``size`` shifted Slices (the box sum is separable), Mul
  (alpha / size^len(axes)), Add (bias), Pow (beta), Div.
An even size (only ONNX's LRN writes one: Caffe and TensorFlow sizes are odd, and OpenVINO's
PyTorch frontend decomposes torch's LocalResponseNorm into Pad and AvgPool) takes ONNX's window,
[i - floor((size-1)/2), i + ceil((size-1)/2)], one more above than below, through the second form
(onnxruntime's LRN kernel refuses even sizes). The spec's text and OpenVINO's CPU plugin (a
centred window of size-1, measured with 2026.4) and torch (one more below) differ; ONNX is the
framework round trip that writes such a layer (tests/test_response_normalization.py). Run-time
axes are refused (the window is built at convert time).

GRN-1: y = x / sqrt(sum over channels (axis 1) of x^2 + bias), data of rank 2..4 -> ReduceSumSquare
(axis 1, keepdims), Add, Sqrt, Div (f16 computed in f32 between two Casts: the sum of squares
overflows f16 long before the result does).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from ..lowering.registry import lowers
from ._common.inputs import const_ints, float_input, known_rank, normalize_axis
from ._common.shapes import INT64_MAX, i64

_FLOAT = 1  # TensorProto.FLOAT


def _box_sum(g, sq: str, axes: list[int], rank: int, size: int) -> str:
    """Sum of ``sq`` over the box of side ``size`` on ``axes`` (zeros outside): (size-1)//2
    below each element, the rest (one more for an even size) above."""
    below = (size - 1) // 2
    above = size - 1 - below
    if size == 1 or not axes:
        return sq
    pads = [below if a in axes else 0 for a in range(rank)] + [above if a in axes else 0 for a in range(rank)]
    padded = g.Pad(sq, i64(g, pads, "pads"))
    for axis in axes:
        total = None
        for k in range(size):
            end = k - (size - 1) or INT64_MAX  # drop size-1-k from the end: the original length
            part = g.Slice(padded, i64(g, [k]), i64(g, [end]), i64(g, [axis]))
            total = part if total is None else g.Add(total, part)
        padded = total
    return padded


@lowers("LRN", "opset1")
def lrn1(ctx, layer, inputs):
    """LRN-1 (data, axes) -> LRN (axes [1], 4-D f32/f16) or Mul, Pad, Slice/Add per window step,
    Mul, Add, Pow, Div (other axes; f16 computed in f32)."""
    x, axes_v = inputs
    float_input(ctx, layer, x)
    rank = known_rank(layer, x)
    raw = const_ints(layer, axes_v, "axes")
    axes = sorted({normalize_axis(layer, a, rank, "axes value") for a in raw})
    size = int(layer.attrs["size"])
    alpha, beta, bias = (float(layer.attrs[k]) for k in ("alpha", "beta", "bias"))
    if size < 1:
        raise InvalidLayer(layer, f"size must be positive, got {size}")
    g = ctx.b
    et = x.etype
    cast = et.name == "f16"
    work = g.Cast(x, to=_FLOAT) if cast else x.name
    ct = np.float32 if cast else et.numpy
    if axes == [1] and rank == 4 and et.name in ("f16", "f32") and size % 2:  # (onnxruntime: odd only)
        out = g.LRN(work, size=size, alpha=alpha, beta=beta, bias=bias)
    else:
        total = _box_sum(g, g.Mul(work, work), axes, rank, size)
        scale = g.const(alpha / float(size) ** len(axes), ct, "scale")
        base = g.Add(g.Mul(total, scale), g.const(bias, ct, "bias"))
        out = g.Div(work, g.Pow(base, g.const(beta, ct, "beta")))
    return [g.Cast(out, to=et.onnx) if cast else out]


def _reduce_sum_square(g, x: str, axes: list[int]) -> str:
    if g.opset >= 18:
        return g.ReduceSumSquare(x, i64(g, axes, "axes"), keepdims=1)
    return g.ReduceSumSquare(x, axes=axes, keepdims=1)


@lowers("GRN", "opset1")
def grn1(ctx, layer, inputs):
    """GRN-1 (data) -> ReduceSumSquare (axis 1), Add (bias), Sqrt, Div (f16 in f32)."""
    (x,) = inputs
    float_input(ctx, layer, x)
    if x.rank is not None and not 2 <= x.rank <= 4:
        raise InvalidLayer(layer, f"GRN needs data of rank 2, 3 or 4, got rank {x.rank}")
    g = ctx.b
    et = x.etype
    cast = et.name == "f16"
    work = g.Cast(x, to=_FLOAT) if cast else x.name
    ct = np.float32 if cast else et.numpy
    norm = g.Sqrt(g.Add(_reduce_sum_square(g, work, [1]), g.const(float(layer.attrs["bias"]), ct, "bias")))
    out = g.Div(work, norm)
    return [g.Cast(out, to=et.onnx) if cast else out]
