"""The normalizations: MVN-1/-6, GroupNormalization-12, BatchNormInference-1/-5 and NormalizeL2-1.

MVN-6 (mean-variance normalization over constant axes; LayerNorm as OpenVINO writes it):
LayerNorm's form (normalize_variance, eps inside the sqrt, the trailing axes, static normalized
dims) -> LayerNormalization (ONNX opset >= 17; onnxruntime runs it as one kernel, ~7x faster than
the chain and as precise, measured), taking the constant Multiply(gamma) and Add(beta) that
follow as its scale and bias (:mod:`.layer_norm_affine`). Otherwise -> ReduceMean, Sub[, Pow,
ReduceMean, Add, Sqrt, Div] (eps inside the sqrt) or [..., Sqrt, Add, Div] (eps outside), the
spec's two passes; f16 data goes through that chain in f32 (Cast, chain, Cast).

GroupNormalization-12 (diffusion U-Nets) -> Reshape [N, G, -1], ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div,
Reshape back, Mul, Add (per-channel scale and bias). Not ONNX GroupNormalization: its opset-18
form takes per-*group* scale/bias and only opset 21 takes per-channel ones, so no single node is
right at opsets 14..21; the chain is. f16 data runs the chain in f32 (Cast, chain, Cast).

BatchNormInference (older CNN exports) with constant gamma/beta/mean/variance -> one Mul and one Add per channel
(coefficients folded in float64, rounded once); with run-time parameters -> BatchNormalization
(inference mode). OpenVINO's opset1 form lists gamma, beta, data, mean, variance; opset5 puts data
first.

NormalizeL2: x / sqrt(max(sum(x^2), eps)) or x / sqrt(sum(x^2) + eps) over constant axes ->
ReduceSumSquare(keepdims=1), Max/Add, Sqrt, Div. Floats only.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import FOLD_ELEMENTS, FLOAT_TYPES, const_ints, float_input, normalize_axis
from ._common.shapes import as_int64, i64, shape_of
from ._layer_norm_affine import layer_norm

_FLOAT = 1  # TensorProto.FLOAT


def _reduce_mean(g, x, axes) -> str:
    """Mean over ``axes``: a list, or an int64 name of run-time axes (opset 18; none: x itself)."""
    if isinstance(axes, str):
        return g.ReduceMean(x, axes, keepdims=1, noop_with_empty_axes=1)
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
    rank = len(x.shape)
    if not axes_v.is_const:  # ReduceMean's axes input; no axes: x - x as below
        ctx.require_opset(layer, 18, "MVN with axes known only at run time")
        return [_mvn_chain(ctx, layer, x, _run_time_axes(ctx.b, axes_v, rank))]
    raw = const_ints(layer, axes_v, "axes")
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
    tail = x.shape[axes[0]:]
    if (normalize and inside and ctx.opset >= 17 and axes == list(range(axes[0], rank))
            and all(d is not None for d in tail)):
        return [layer_norm(ctx, x, axes[0], eps)]  # takes a following Multiply(gamma), Add(beta)
    return [_mvn_chain(ctx, layer, x, axes)]


@lowers("MVN", "opset1")
@lowers("MVN", "opset2")  # the same op: OpenVINO writes MVN-1 as opset2 since opset2 listed it
def mvn1(ctx, layer, inputs):
    """MVN-1 -> as MVN-6 over the axes from 1 (across_channels) or 2 to the last, eps inside the sqrt
    (LayerNormalization, or ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div). The spec's and
    OpenVINO 2026's CPU plugin's rule (measured; its older ConvertMVN1ToMVN6 put eps outside);
    ONNX InstanceNormalization, which Model Optimizer wrote as MVN-1, has it inside too."""
    x = inputs[0]
    if x.shape is None:
        raise UnsupportedLayer(layer, "data of unknown rank is not supported")
    start = 1 if layer.attrs["across_channels"] else 2
    if len(x.shape) <= start:
        raise InvalidLayer(layer, f"a rank-{len(x.shape)} input has no axes from {start} on to normalize")
    attrs = dict(normalize_variance=layer.attrs["normalize_variance"], eps=layer.attrs["eps"], eps_mode="inside_sqrt")
    axes = ctx.b.const_value(np.arange(start, len(x.shape), dtype=np.int64))
    return mvn6(ctx, dataclasses.replace(layer, attrs=attrs), [x, axes])


def _run_time_axes(g, axes_v, rank: int) -> str:
    """Run-time axes as an int64 vector, negative ones plus ``rank``."""
    axes = g.Reshape(as_int64(g, axes_v), i64(g, [-1]))
    return g.Where(g.Less(axes, i64(g, 0)), g.Add(axes, i64(g, rank)), axes)


def _mvn_chain(ctx, layer, x, axes):
    """ReduceMean, Sub [, Pow, ReduceMean, Add/Sqrt, Div] over ``axes`` (a list or a name)."""
    g, et = ctx.b, x.etype
    normalize = bool(layer.attrs["normalize_variance"])
    eps = float(layer.attrs["eps"])
    inside = str(layer.attrs["eps_mode"]).lower() == "inside_sqrt"
    work = g.Cast(x, to=_FLOAT) if et.name == "f16" else x
    ct = np.float32 if et.name == "f16" else et.numpy
    centered = g.Sub(work, _reduce_mean(g, work, axes))
    out = centered
    if normalize:
        var = _reduce_mean(g, g.Pow(centered, g.const(2.0, ct, "two")), axes)
        e = g.const(eps, ct, "eps")
        denom = g.Sqrt(g.Add(var, e)) if inside else g.Add(g.Sqrt(var), e)
        out = g.Div(centered, denom)
    return g.Cast(out, to=et.onnx) if et.name == "f16" else out


# -- GroupNormalization, BatchNormInference --------------------------------------------------
def _float_data(layer, x) -> None:
    if x.etype is None or x.etype.name not in FLOAT_TYPES:
        raise UnsupportedLayer(layer, f"{layer.type} on element type {x.etype.name if x.etype else '?'} "
                                      "is not supported (f16, f32, f64 are)")
    if x.shape is None:
        raise UnsupportedLayer(layer, "data of unknown rank is not supported (the per-channel "
                                      "scale needs the rank to broadcast)")
    if len(x.shape) < 2:
        raise InvalidLayer(layer, f"data must have rank >= 2 ([N, C, ...]), got rank {len(x.shape)}")


def _check_channels(layer, params, channels, names) -> None:
    for v, what in zip(params, names):
        if v.shape is not None and len(v.shape) != 1:
            raise InvalidLayer(layer, f"{what} must be 1-D [C], got rank {len(v.shape)}")
        if v.shape is not None and None not in (v.shape[0], channels) and v.shape[0] != channels:
            raise InvalidLayer(layer, f"{what} has {v.shape[0]} values for {channels} channels")


def _work_type(x):
    """(numpy dtype the chain computes in, whether the data is Cast to it): f16 runs in f32."""
    return (np.float32, True) if x.etype.name == "f16" else (x.etype.numpy, False)


def _per_channel(g, v, rank: int, dtype) -> str:
    """``v`` [C] as [C, 1, ..., 1] (rank - 1 dims) in ``dtype``: a constant when ``v`` is one."""
    if v.is_const:
        arr = np.asarray(v.value()).astype(np.float64).astype(dtype)
        return g.const(arr.reshape((-1,) + (1,) * (rank - 2)), dtype, "per_channel")
    name = g.Cast(v, to=_FLOAT) if v.etype.name == "f16" else v.name
    return g.Reshape(name, i64(g, [-1] + [1] * (rank - 2), "shape"))


def _fold_group_norm(x, scale, bias, groups: int, eps: float) -> np.ndarray:
    v = x.astype(np.float64)
    n, c = v.shape[:2]
    r = v.reshape(n, groups, -1)
    centered = r - r.mean(axis=2, keepdims=True)
    normed = (centered / np.sqrt((centered ** 2).mean(axis=2, keepdims=True) + eps)).reshape(v.shape)
    shape = (c,) + (1,) * (v.ndim - 2)
    out = normed * scale.astype(np.float64).reshape(shape) + bias.astype(np.float64).reshape(shape)
    return out.astype(x.dtype)


@lowers("GroupNormalization", "opset12")
def group_normalization12(ctx, layer, inputs):
    """GroupNormalization-12 -> Reshape, ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div, Reshape,
    Mul, Add (f16: computed in f32 between two Casts)."""
    x, scale, bias = inputs
    _float_data(layer, x)
    groups, eps = int(layer.attrs["num_groups"]), float(layer.attrs["epsilon"])
    channels = x.shape[1]
    if groups < 1:
        raise InvalidLayer(layer, f"num_groups must be >= 1, got {groups}")
    if channels is not None and channels % groups:
        raise InvalidLayer(layer, f"{channels} channels cannot be split into {groups} groups")
    _check_channels(layer, (scale, bias), channels, ("scale", "bias"))
    rank = len(x.shape)
    if 0 in x.shape:  # an empty tensor: nothing to normalize
        return [x]
    if all(v.is_const for v in inputs) and int(np.prod(x.shape)) <= FOLD_ELEMENTS:
        return [_fold_group_norm(*(np.asarray(v.value()) for v in inputs), groups, eps)]
    g = ctx.b
    dtype, cast = _work_type(x)
    work = g.Cast(x, to=_FLOAT) if cast else x.name
    grouped = g.Reshape(work, i64(g, [0, groups, -1], "shape"))  # allowzero=0: N copied
    centered = g.Sub(grouped, _reduce_mean(g, grouped, [2]))
    var = _reduce_mean(g, g.Mul(centered, centered), [2])
    normed = g.Div(centered, g.Sqrt(g.Add(var, g.const(eps, dtype, "eps"))))
    back = g.Reshape(normed, shape_of(g, x))
    out = g.Add(g.Mul(back, _per_channel(g, scale, rank, dtype)), _per_channel(g, bias, rank, dtype))
    return [g.Cast(out, to=x.etype.onnx) if cast else out]


def _batch_norm(ctx, layer, x, gamma, beta, mean, var):
    _float_data(layer, x)
    params = (gamma, beta, mean, var)
    _check_channels(layer, params, x.shape[1], ("gamma", "beta", "mean", "variance"))
    eps = float(layer.attrs["epsilon"])
    rank = len(x.shape)
    g = ctx.b
    dtype, cast = _work_type(x)
    if all(v.is_const for v in params):
        p = [np.asarray(v.value()).astype(np.float64) for v in params]
        mul = p[0] / np.sqrt(p[3] + eps)
        add = p[1] - p[2] * mul
        shape = (-1,) + (1,) * (rank - 2)
        if x.is_const and int(np.prod(x.shape)) <= FOLD_ELEMENTS:
            v = np.asarray(x.value()).astype(np.float64)
            return [(v * mul.reshape(shape) + add.reshape(shape)).astype(x.etype.numpy)]
        work = g.Cast(x, to=_FLOAT) if cast else x.name
        out = g.Add(g.Mul(work, g.const(mul.astype(dtype).reshape(shape), dtype, "bn_scale")),
                    g.const(add.astype(dtype).reshape(shape), dtype, "bn_shift"))
        return [g.Cast(out, to=x.etype.onnx) if cast else out]
    work = g.Cast(x, to=_FLOAT) if cast else x.name
    names = [g.Cast(v, to=_FLOAT) if v.etype.name == "f16" else v.name for v in params]
    out = g.BatchNormalization(work, *names, epsilon=eps)
    return [g.Cast(out, to=x.etype.onnx) if cast else out]


@lowers("BatchNormInference", "opset5")
def batch_norm_inference5(ctx, layer, inputs):
    """BatchNormInference-5 (data, gamma, beta, mean, variance) -> Mul, Add (constant parameters,
    folded per channel) or BatchNormalization (run-time parameters)."""
    return _batch_norm(ctx, layer, *inputs)


@lowers("BatchNormInference", "opset1")
def batch_norm_inference1(ctx, layer, inputs):
    """BatchNormInference-1 (gamma, beta, data, mean, variance) -> Mul, Add or BatchNormalization."""
    gamma, beta, x, mean, var = inputs
    return _batch_norm(ctx, layer, x, gamma, beta, mean, var)


# -- NormalizeL2 -----------------------------------------------------------------------------
@lowers("NormalizeL2", "opset1")
def normalize_l2(ctx, layer, inputs):
    """NormalizeL2-1 -> ReduceSumSquare(keepdims=1), Max or Add (eps), Sqrt, Div."""
    x, axes_v = inputs
    float_input(ctx, layer, x)
    if x.rank is None:
        raise UnsupportedLayer(layer, "NormalizeL2 needs data of known rank")
    g = ctx.b
    if not axes_v.is_const:  # ReduceSum's axes input (opset 13); no axes: x / |x| as the spec says
        eps = g.const(np.asarray(layer.attrs["eps"], x.etype.numpy), x.etype.numpy, "eps")
        total = g.ReduceSum(g.Mul(x, x), _run_time_axes(g, axes_v, x.rank), keepdims=1, noop_with_empty_axes=1)
        total = g.Max(total, eps) if layer.attrs["eps_mode"] == "max" else g.Add(total, eps)
        return [g.Div(x, g.Sqrt(total))]
    axes = const_ints(layer, axes_v, "axes")
    if not axes:
        raise UnsupportedLayer(layer, "NormalizeL2 over no axes is not supported (OpenVINO's CPU plugin "
                                      "returns |x|/|x| there, not x/|x|)")
    if any(not -x.rank <= a < x.rank for a in axes):
        raise InvalidLayer(layer, f"axes {axes} out of range for rank {x.rank}")
    axes = sorted({a % x.rank for a in axes})
    g = ctx.b
    eps = g.const(np.asarray(layer.attrs["eps"], x.etype.numpy), x.etype.numpy, "eps")
    if ctx.opset >= 18:
        total = g.ReduceSumSquare(x, i64(g, axes, "axes"), keepdims=1)
    else:
        total = g.ReduceSumSquare(x, axes=axes, keepdims=1)
    total = g.Max(total, eps) if layer.attrs["eps_mode"] == "max" else g.Add(total, eps)
    return [g.Div(x, g.Sqrt(total))]
