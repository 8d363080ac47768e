"""GroupNormalization-12 and BatchNormInference-1/-5 (diffusion U-Nets, older CNN exports).

GroupNormalization -> Reshape [N, G, -1], ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div,
Reshape back, Mul, Add (per-channel scale and bias). Not ONNX GroupNormalization: its opset-18
form takes per-*group* scale/bias and only opset 21 takes per-channel ones, so no single node is
right at opsets 14..21; the chain is. f16 data runs the chain in f32 (Cast, chain, Cast).

BatchNormInference with constant gamma/beta/mean/variance -> one Mul and one Add per channel
(coefficients folded in float64, rounded once); with run-time parameters -> BatchNormalization
(inference mode). OpenVINO's opset1 form lists gamma, beta, data, mean, variance; opset5 puts data
first.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ..lowering.shapes import i64, shape_of

_F32 = 1  # TensorProto.FLOAT
_FLOATS = ("f16", "f32", "f64")
FOLD_ELEMENTS = 4096


def _float_data(layer, x) -> None:
    if x.etype is None or x.etype.name not in _FLOATS:
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
    name = g.Cast(v, to=_F32) if v.etype.name == "f16" else v.name
    return g.Reshape(name, i64(g, [-1] + [1] * (rank - 2), "shape"))


def _reduce_mean(g, x: str, axis: int) -> str:
    if g.opset >= 18:
        return g.ReduceMean(x, i64(g, [axis], "axes"), keepdims=1)
    return g.ReduceMean(x, axes=[axis], keepdims=1)


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
    work = g.Cast(x, to=_F32) if cast else x.name
    grouped = g.Reshape(work, i64(g, [0, groups, -1], "shape"))  # allowzero=0: N copied
    centered = g.Sub(grouped, _reduce_mean(g, grouped, 2))
    var = _reduce_mean(g, g.Mul(centered, centered), 2)
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
        work = g.Cast(x, to=_F32) if cast else x.name
        out = g.Add(g.Mul(work, g.const(mul.astype(dtype).reshape(shape), dtype, "bn_scale")),
                    g.const(add.astype(dtype).reshape(shape), dtype, "bn_shift"))
        return [g.Cast(out, to=x.etype.onnx) if cast else out]
    work = g.Cast(x, to=_F32) if cast else x.name
    names = [g.Cast(v, to=_F32) if v.etype.name == "f16" else v.name for v in params]
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
