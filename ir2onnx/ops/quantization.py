"""FakeQuantize-1, the layer of every NNCF / POT INT8 IR, lowered to match OpenVINO's CPU plugin.

Measured with OpenVINO 2026.4 (CPU, f32 inference precision):

* Constant ranges (the usual case) run the CPU quantization kernel, whose scales are computed once
  in f32: ``isc = (L-1)/(ih-il)``, ``ish = -il*(L-1)/(ih-il)``, ``osc = (oh-ol)/(L-1)``,
  ``osh = ol``, and per element ``y = max(min(x, ih), il)``, ``q = round_half_even(fma(y, isc,
  ish))``, ``out = fma(q, osc, osh)``. ONNX has no fused multiply-add, so the chain computes the
  two multiply-adds in f64 (the product of two f32 numbers is exact there) and casts to f32 once,
  which reproduces the fma: Cast(f64), Min, Max, Mul, Add, Cast(f32), Round, Cast(f64), Mul, Sub
  (``osh - q*(-osc)``, which onnxruntime cannot drop as a no-op), Cast. The level ``q`` (ties to even included) is then bit-exact; the output is bit-exact where
  OpenVINO runs the kernel as is (e.g. levels 2 and 16). For levels 255/256 OpenVINO's
  low-precision transformations re-derive the output scale and shift through an integer range
  (u8/i8), so its outputs there differ from the kernel formula by at most a few f32 ulps
  (relative 1e-6), never by a level.
* Degenerate ranges follow the source framework model, not OpenVINO's kernel: OpenVINO's ONNX
  frontend writes ONNX QuantizeLinear with a negative scale as a FakeQuantize with ``il > ih``,
  and onnxruntime on that model clamps the normalised value ``(x - il) / (ih - il)`` to [0, 1]:
  ``ol`` on il's side of il (``x >= il``), ``oh`` on ih's side of ih (``x <= ih``), the formula
  between. For ``il <= ih`` that is the spec text (``ol`` for ``x <= il``, ``oh`` for ``x > ih``;
  ``il == ih`` splits there, as a scale of 0 gives). OpenVINO's kernel clamps every element to
  ``il`` and gives ``ol`` (il > ih; measured, and ol/oh swapped at the ends in the ONNX round
  trip) or NaN everywhere (il == ih: inf * il - inf). docs/deviations.md: where OpenVINO's runtime differs
  from the spec. Constant ranges with any ``il >= ih`` therefore take the run-time chain below.
* Ranges known only at run time take OpenVINO's other path, the formula in f32:
  ``where(low, ol, where(high, oh, round((x-il)/(ih-il)*(L-1))/(L-1)*(oh-ol)+ol))`` with
  ``low = x <= il`` and ``high = x > ih`` when ``il <= ih``, ``low = x >= il`` and
  ``high = x <= ih`` when ``il > ih``; bit-exact with OpenVINO for ``il < ih``.

f16 / bf16 / f64 data are computed in f32 like OpenVINO's CPU plugin and cast back; ranges may
have another float type than X (OpenVINO accepts f32 ranges on f16 data) and are read in f32 too.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from . import _quantization_qdq as qdq
from ._common.inputs import foldable

_FLOATS = ("f32", "f16", "bf16", "f64")
_F32, _F64 = TensorProto.FLOAT, TensorProto.DOUBLE
_RANGES = ("input_low", "input_high", "output_low", "output_high")


def _check(layer, inputs) -> int:
    """Validate like OpenVINO's shape inference; returns ``levels``."""
    levels = layer.attrs["levels"]
    if levels < 2:
        raise InvalidLayer(layer, f"levels={levels}: FakeQuantize needs levels >= 2")
    x = inputs[0]
    if x.etype.name not in _FLOATS:
        raise InvalidLayer(layer, f"X has element type {x.etype.name}; FakeQuantize needs a floating type")
    mode = layer.attrs["auto_broadcast"]
    if mode == "pdpd":
        raise UnsupportedLayer(layer, "auto_broadcast='pdpd' is not supported (only 'numpy' and 'none')")
    for name, r in zip(_RANGES, inputs[1:]):
        if r.etype is None or r.etype.name not in _FLOATS:  # OpenVINO takes f32 ranges on f16 X (FP16-INT8 IRs)
            raise InvalidLayer(layer, f"{name} has element type {r.etype.name if r.etype else '?'}; "
                                      "FakeQuantize ranges need a floating type")
        if x.shape is None or r.shape is None:
            continue
        if mode == "none":
            if len(r.shape) != len(x.shape) or any(a is not None and b is not None and a != b
                                                  for a, b in zip(x.shape, r.shape)):
                raise InvalidLayer(layer, f"auto_broadcast='none': {name} shape {list(r.shape)} "
                                          f"differs from X shape {list(x.shape)}")
            continue
        for a, b in zip(reversed(x.shape), reversed(r.shape)):
            if a is not None and b is not None and a != b and 1 not in (a, b):
                raise InvalidLayer(layer, f"{name} shape {list(r.shape)} does not broadcast to "
                                          f"X shape {list(x.shape)} (numpy rules)")
    return levels


def kernel_params(il, ih, ol, oh, levels: int) -> tuple[np.ndarray, ...]:
    """OpenVINO CPU's crop/scale/shift tensors, computed in f32 the way its kernel does."""
    il, ih, ol, oh = (np.asarray(v).astype(np.float32) for v in (il, ih, ol, oh))
    l1 = np.float32(levels - 1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        isc = l1 / (ih - il)
        ish = (-il * l1) / (ih - il)
        osc = (oh - ol) / l1
    return ih, il, isc, ish, osc, ol


def kernel_fold(x: np.ndarray, params) -> np.ndarray:
    """The constant-range chain in NumPy (the same f64 steps as the ONNX nodes), in f32."""
    ch, cl, isc, ish, osc, osh = (p.astype(np.float64) for p in params)
    with np.errstate(invalid="ignore", over="ignore"):
        y = np.maximum(np.minimum(x.astype(np.float32).astype(np.float64), ch), cl)
        q = np.rint((y * isc + ish).astype(np.float32))
        return (q.astype(np.float64) * osc + osh).astype(np.float32)


def kernel_level(x: np.ndarray, params) -> np.ndarray:
    """The constant-range kernel's quantization level ``q`` (0 .. levels-1) of each element."""
    ch, cl, isc, ish = (p.astype(np.float64) for p in params[:4])
    with np.errstate(invalid="ignore", over="ignore"):
        y = np.maximum(np.minimum(x.astype(np.float32).astype(np.float64), ch), cl)
        return np.rint((y * isc + ish).astype(np.float32)).astype(np.int64)


def _to_f32(ctx, v):
    return v if v.etype.name == "f32" else ctx.b.Cast(v, to=_F32)


def _kernel_chain(ctx, x, params) -> str:
    b = ctx.b
    ch, cl, isc, ish, osc, osh = params
    # osh - q*(-osc) == q*osc + osh bit for bit, and onnxruntime's no-op elimination (which drops
    # an Add of 0 and keeps a -0.0 that OpenVINO's fma turns into +0.0) leaves Sub(osh, .) alone
    ch, cl, isc, ish, nosc, osh = (b.const(p.astype(np.float64), np.float64, "fq_param")
                                   for p in (ch, cl, isc, ish, -osc, osh))
    xd = b.Cast(x if x.etype.name != "f64" else b.Cast(x, to=_F32), to=_F64)  # f16/bf16 -> f64 is exact
    y = b.Max(b.Min(xd, ch), cl)
    q = b.Round(b.Cast(b.Add(b.Mul(y, isc), ish), to=_F32))
    return b.Cast(b.Sub(osh, b.Mul(b.Cast(q, to=_F64), nosc)), to=_F32)


def _spec_chain(ctx, x, ranges, levels: int) -> str:
    b = ctx.b
    xf = _to_f32(ctx, x)
    il, ih, ol, oh = (_to_f32(ctx, r) for r in ranges)
    l1 = b.const(np.float32(levels - 1), np.float32, "levels_minus_1")
    q = b.Round(b.Mul(b.Div(b.Sub(xf, il), b.Sub(ih, il)), l1))
    v = b.Add(b.Mul(b.Div(q, l1), b.Sub(oh, ol)), ol)
    ordered = b.LessOrEqual(il, ih)  # il > ih: ONNX QuantizeLinear with a negative scale
    reverse = b.Not(ordered)  # (onnxruntime's Where has no bool kernel: And/Or pick the side)
    low = b.Or(b.And(ordered, b.LessOrEqual(xf, il)), b.And(reverse, b.GreaterOrEqual(xf, il)))
    high = b.Or(b.And(ordered, b.Greater(xf, ih)), b.And(reverse, b.LessOrEqual(xf, ih)))
    return b.Where(low, ol, b.Where(high, oh, v))


@lowers("FakeQuantize", "opset1")
def fake_quantize(ctx, layer, inputs):
    """FakeQuantize-1 (X, input_low, input_high, output_low, output_high) -> constant ranges:
    Cast, Min, Max, Mul, Add, Cast, Round, Cast, Mul, Sub, Cast (scales folded at convert time);
    run-time ranges: Sub, Div, Mul, Round, Div, Mul, Add, LessOrEqual, GreaterOrEqual, Greater,
    Not, And, Or, Where.
    Folded entirely when X is a small constant too. With ``--quantized qdq``: QuantizeLinear,
    DequantizeLinear where it is an 8-bit affine quantization (see :mod:`.quantization_qdq`)."""
    levels = _check(layer, inputs)
    x, ranges = inputs[0], inputs[1:]
    etype = x.etype
    out_type = ctx.onnx_type(layer, etype)
    degenerate = all(r.is_const for r in ranges) and bool(np.any(
        np.asarray(ranges[0].value(), np.float64) >= np.asarray(ranges[1].value(), np.float64)))
    if ctx.quantized != "exact":
        ctx.stats["fq_total"] = ctx.stats.get("fq_total", 0) + 1
        if all(r.is_const for r in ranges) and not degenerate:
            values = [r.value() for r in ranges]
            out = qdq.weights(ctx, layer, x, values, levels, kernel_params, kernel_level)
            if out is None and not x.is_const:
                out = qdq.activations(ctx, layer, x, values, levels, kernel_params)
            if out is not None:
                ctx.stats["fq_qdq"] = ctx.stats.get("fq_qdq", 0) + 1
                return [out if etype.name == "f32" else ctx.b.Cast(out, to=out_type)]
    if all(r.is_const for r in ranges) and not degenerate:
        params = kernel_params(*(r.value() for r in ranges), levels)
        if foldable(x):
            return [kernel_fold(x.value(), params).astype(etype.numpy)]
        out = _kernel_chain(ctx, x, params)
    else:
        out = _spec_chain(ctx, x, ranges, levels)
    return [out if etype.name == "f32" else ctx.b.Cast(out, to=out_type)]


# -- FakeConvert-13 --------------------------------------------------------------------------------
_F8_MAX = {"f8e4m3": 448.0, "f8e5m2": 57344.0}
_F16, _F8 = TensorProto.FLOAT16, {"f8e4m3": TensorProto.FLOAT8E4M3FN, "f8e5m2": TensorProto.FLOAT8E5M2}


@lowers("FakeConvert", "opset13")
def fake_convert(ctx, layer, inputs):
    """FakeConvert-13 (data, scale, shift?) -> Mul, Sub, Cast(f16), Cast(f32), Max, Min, IsNaN,
    Where, Cast(f8), Cast(f32), Add, Mul(1/scale) [Cast back for f16/bf16 data].

    The spec: ``y = data * scale - shift``, Convert to the f8 type and back, ``(y + shift) / scale``.
    OpenVINO's CPU plugin (measured, 2026.4; bit for bit on 10^5 random values of 19 binades per
    type, scales 1, 3.7 and 0.37 with shift 1.25) computes ``y`` in f32, rounds it to f16, clamps
    it to the f8 range (saturates: ±448 / ±57344, NaN -> -max), rounds to f8 (nearest even), and
    multiplies ``y + shift`` by the f32 reciprocal of the scale. The IRs come from NNCF's FP8
    quantization for OpenVINO, so OpenVINO's arithmetic is the model's: this chain reproduces it.
    """
    x, scale = inputs[:2]
    shift = inputs[2] if len(inputs) > 2 else None
    name = x.etype.name if x.etype else "?"
    if name not in ("f32", "f16", "bf16"):
        raise UnsupportedLayer(layer, f"FakeConvert on {name} is not supported (f32, f16, bf16)")
    dst = layer.attrs["destination_type"]
    ctx.require_opset(layer, 19, "FakeConvert (ONNX Cast to float8)")
    g = ctx.b
    xf, s = _to_f32(ctx, x), _to_f32(ctx, scale)
    y = g.Mul(xf, s)
    if shift is not None:
        sh = _to_f32(ctx, shift)
        y = g.Sub(y, sh)
    y = g.Cast(g.Cast(y, to=_F16), to=_F32)  # OpenVINO's f16 step (overflow: inf, then clamped)
    top = np.float32(_F8_MAX[dst])
    clamped = g.Min(g.Max(y, g.const(-top, np.float32, "f8_min")), g.const(top, np.float32, "f8_max"))
    clamped = g.Where(g.IsNaN(y), g.const(-top, np.float32, "f8_min"), clamped)
    q = g.Cast(g.Cast(clamped, to=_F8[dst], saturate=1), to=_F32)
    if shift is not None:
        q = g.Add(q, sh)
    inv = (g.const(np.float32(1) / np.asarray(scale.value(), np.float32), np.float32, "inv_scale")
           if scale.is_const else g.Reciprocal(s))
    out = g.Mul(q, inv)
    return [out if name == "f32" else g.Cast(out, to=x.etype.onnx)]
