"""MVN-6 (mean-variance normalization over constant axes; LayerNorm as OpenVINO writes it).

LayerNorm's form (normalize_variance, eps inside the sqrt, the trailing axes, static normalized
dims) -> LayerNormalization with a scale of ones (ONNX opset >= 17; onnxruntime runs it as one
kernel, ~7x faster than the chain and as precise, measured). Otherwise -> ReduceMean, Sub[, Pow,
ReduceMean, Add, Sqrt, Div] (eps inside the sqrt) or [..., Sqrt, Add, Div] (eps outside), the
spec's two passes; f16 data goes through that chain in f32 (Cast, chain, Cast).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.inputs import const_ints, normalize_axis
from ..lowering.registry import lowers
from ..lowering.shapes import i64

_FLOAT = 1  # TensorProto.FLOAT


def _reduce_mean(g, x, axes: list[int]) -> str:
    if g.opset >= 18:
        return g.ReduceMean(x, i64(g, axes, "axes"), keepdims=1)
    return g.ReduceMean(x, axes=axes, keepdims=1)


def _fold(x: np.ndarray, axes: tuple, normalize: bool, eps: float, inside: bool) -> np.ndarray:
    v = x.astype(np.float64)
    centered = v - v.mean(axis=axes, keepdims=True)
    if normalize:
        var = (centered ** 2).mean(axis=axes, keepdims=True)
        centered = centered / (np.sqrt(var + eps) if inside else np.sqrt(var) + eps)
    return centered.astype(x.dtype)


@lowers("MVN", "opset6")
def mvn6(ctx, layer, inputs):
    """MVN-6 -> LayerNormalization (LayerNorm's form, opset >= 17) or ReduceMean, Sub, Pow,
    ReduceMean, Add, Sqrt, Div (eps_mode inside_sqrt; outside: ..., Sqrt, Add, Div;
    normalize_variance=false: ReduceMean, Sub)."""
    x, axes_v = inputs
    if x.etype is None or x.etype.name not in ("f16", "f32", "f64"):
        raise UnsupportedLayer(layer, f"MVN on element type {x.etype.name if x.etype else '?'} is not supported")
    if x.shape is None:
        raise UnsupportedLayer(layer, "data of unknown rank is not supported")
    raw = const_ints(layer, axes_v, "axes")
    rank = len(x.shape)
    axes = sorted({normalize_axis(layer, a, rank, "axes value") for a in raw})
    if len(axes) != len(raw):
        raise InvalidLayer(layer, f"axes {raw} name a dimension twice")
    normalize = bool(layer.attrs["normalize_variance"])
    eps = float(layer.attrs["eps"])
    inside = str(layer.attrs["eps_mode"]).lower() == "inside_sqrt"
    if not axes:  # each element is its own slice: x - x (then 0 / positive = 0; NaN stays NaN)
        return [ctx.b.Sub(x, x)]
    if 0 in x.shape:  # nothing to normalize: the empty input is the output (an empty scale of
        return [x]    # ones for LayerNormalization would be an initializer onnxruntime drops)
    if x.is_const and int(np.prod(x.shape)) <= 4096:
        return [_fold(np.asarray(x.value()), tuple(axes), normalize, eps, inside)]
    g = ctx.b
    et = x.etype
    tail = x.shape[axes[0]:]
    if (normalize and inside and ctx.opset >= 17 and axes == list(range(axes[0], rank))
            and all(d is not None for d in tail)):
        ones = g.const(np.ones(tail, et.numpy), et.numpy, "ones")
        return [g.LayerNormalization(x, ones, axis=axes[0], epsilon=eps)]
    work = g.Cast(x, to=_FLOAT) if et.name == "f16" else x
    ct = np.float32 if et.name == "f16" else et.numpy
    centered = g.Sub(work, _reduce_mean(g, work, axes))
    out = centered
    if normalize:
        var = _reduce_mean(g, g.Pow(centered, g.const(2.0, ct, "two")), axes)
        e = g.const(eps, ct, "eps")
        denom = g.Sqrt(g.Add(var, e)) if inside else g.Add(g.Sqrt(var), e)
        out = g.Div(centered, denom)
    return [g.Cast(out, to=et.onnx) if et.name == "f16" else out]
