"""RandomUniform-8 and Multinomial-13 -> ONNX's random ops. The random values cannot match
OpenVINO's (different generators: OpenVINO's Philox/Mersenne streams vs onnxruntime's); shape,
type, range and distribution are the op's, nothing else (docs/operations.md).

* RandomUniform-8: ``RandomUniformLike`` over ``ConstantOfShape(output_shape)`` (the shape may be
  a run-time input) gives ``u`` in [0, 1) (f32; f64 for f64 and integers), then
  ``min + u * (max - min)`` with run-time ``min``/``max``, ``Floor`` for integers, a value that
  rounds up to ``max`` replaced by ``min`` (the range is [min, max)), ``Cast``.
* Multinomial-13: ONNX ``Multinomial`` (with replacement only) on log-probabilities (``Log`` of
  the probabilities unless ``log_probs``), ``sample_size`` = the constant ``num_samples``.

A non-zero ``global_seed`` or ``op_seed`` becomes ONNX's ``seed`` (repeatable runs); both zero:
unseeded, as in OpenVINO.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.shapes import as_int64, i64

_FLOAT, _DOUBLE = 1, 11


def _seed(layer) -> float | None:
    g, o = int(layer.attrs.get("global_seed") or 0), int(layer.attrs.get("op_seed") or 0)
    return float(((g % 65536) << 16) + (o % 65536)) if g or o else None


@lowers("RandomUniform", "opset8")
def random_uniform8(ctx, layer, inputs):
    """RandomUniform-8 -> ConstantOfShape, RandomUniformLike, Sub, Mul, Add [Floor], Less, Where, Cast."""
    shape, low, high = inputs
    out = layer.outputs[0].etype
    if out is None or out.name not in ("f16", "bf16", "f32", "f64", "i32", "i64"):
        raise UnsupportedLayer(layer, f"RandomUniform to {out.name if out else '?'} is not supported")
    if low.etype != out or high.etype != out:
        raise InvalidLayer(layer, "min_val and max_val must have the output's element type")
    g = ctx.b
    ctx.onnx_type(layer, out)
    wide = out.name in ("f64", "i32", "i64")
    to = _DOUBLE if wide else _FLOAT
    zeros = g.ConstantOfShape(as_int64(g, shape))
    u = g.RandomUniformLike(zeros, dtype=to, low=0.0, high=1.0, seed=_seed(layer))
    lo, hi = (g.Reshape(g.Cast(v, to=to), i64(g, [])) for v in (low, high))
    y = g.Add(lo, g.Mul(u, g.Sub(hi, lo)))
    if out.is_integer:
        y = g.Floor(y)
    elif not wide:  # f16/bf16: check the range on the value the output type holds
        y = g.Cast(g.Cast(y, to=out.onnx), to=_FLOAT)
    y = g.Where(g.Less(y, hi), y, lo)
    return [y if out.onnx == to else g.Cast(y, to=out.onnx)]


@lowers("Multinomial", "opset13")
def multinomial13(ctx, layer, inputs):
    """Multinomial-13 -> Cast, [Log], Multinomial(sample_size, dtype, seed)."""
    probs, count = inputs
    if probs.etype is None or not probs.etype.is_float:
        raise UnsupportedLayer(layer, "Multinomial needs floating-point probabilities")
    if not layer.attrs.get("with_replacement"):
        raise UnsupportedLayer(layer, "with_replacement=false: ONNX Multinomial samples with replacement only")
    if not count.is_const:
        raise UnsupportedLayer(layer, "num_samples known only at run time: ONNX Multinomial's sample_size is an "
                                      "attribute")
    n = int(np.asarray(count.value()).reshape(-1)[0])
    if probs.shape is None or len(probs.shape) != 2:
        raise InvalidLayer(layer, "Multinomial takes 2-D probabilities [batch, classes]")
    out = layer.outputs[0].etype
    if out is None or out.name not in ("i32", "i64"):
        raise UnsupportedLayer(layer, f"Multinomial to {out.name if out else '?'} is not supported (i32, i64)")
    g = ctx.b
    x = g.Cast(probs, to=_FLOAT)
    if not layer.attrs.get("log_probs"):
        x = g.Log(x)
    return [g.Multinomial(x, sample_size=n, dtype=out.onnx, seed=_seed(layer))]
