"""Oracles of the normalizations from the specs, element by element in float64, rounded once to
the data type: MVN-6 (MVN-1 as its spec says: MVN-6 over the axes from 1, or 2 without across_channels,
eps inside the sqrt) (for every slice over ``axes``, subtract the mean and, with
normalize_variance, divide by sqrt(var + eps) or sqrt(var) + eps), GroupNormalization-12,
BatchNormInference-1/-5 and NormalizeL2-1."""
from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .elements import as_float64, normalize_axis
from .registry import oracle


@oracle("MVN", "opset6")
def mvn6(layer, inputs):
    data, axes = inputs
    rank = data.ndim
    raw = [int(a) for a in np.asarray(axes).reshape(-1)]
    if any(not -rank <= a < rank for a in raw):
        raise InvalidLayer(layer, f"axes {raw} out of range for rank {rank}")
    reduced = {a % rank for a in raw}
    if len(reduced) != len(raw):
        raise InvalidLayer(layer, f"axes {raw} name a dimension twice")
    normalize = bool(layer.attrs["normalize_variance"])
    eps = float(layer.attrs["eps"])
    inside = str(layer.attrs["eps_mode"]).lower() == "inside_sqrt"
    v = data.astype(np.float64)
    out = np.empty(data.shape, np.float64)
    if data.size == 0:  # no slice to normalize (and no element count to divide by)
        return [out.astype(data.dtype)]
    outer = [range(d) if i not in reduced else [None] for i, d in enumerate(data.shape)]
    for base in itertools.product(*outer):
        inner = [range(data.shape[i]) if p is None else [p] for i, p in enumerate(base)]
        idx = list(itertools.product(*inner))
        mean = math.fsum(v[i] for i in idx) / len(idx)
        var = math.fsum((v[i] - mean) ** 2 for i in idx) / len(idx)
        denom = 1.0
        if normalize:
            denom = math.sqrt(var + eps) if inside else math.sqrt(var) + eps
        for i in idx:
            out[i] = (v[i] - mean) / denom
    return [out.astype(data.dtype)]


@oracle("MVN", "opset1")
@oracle("MVN", "opset2")
def mvn1(layer, inputs):
    data = inputs[0]
    start = 1 if layer.attrs["across_channels"] else 2
    if data.ndim <= start:
        raise InvalidLayer(layer, f"a rank-{data.ndim} input has no axes from {start} on")
    attrs = dict(normalize_variance=layer.attrs["normalize_variance"], eps=layer.attrs["eps"], eps_mode="inside_sqrt")
    return mvn6(dataclasses.replace(layer, attrs=attrs), [data, np.arange(start, data.ndim)])


# -- GroupNormalization, BatchNormInference --------------------------------------------------
def _per_channel_params(layer, data, params, names):
    if data.ndim < 2:
        raise InvalidLayer(layer, f"data must have rank >= 2, got {data.ndim}")
    for p, what in zip(params, names):
        if p.shape != (data.shape[1],):
            raise InvalidLayer(layer, f"{what} of shape {p.shape} does not match {data.shape[1]} channels")
    return [p.astype(np.float64) for p in params]


@oracle("GroupNormalization", "opset12")
def group_normalization12(layer, inputs):
    data, scale, bias = inputs
    groups, eps = int(layer.attrs["num_groups"]), float(layer.attrs["epsilon"])
    scale, bias = _per_channel_params(layer, data, (scale, bias), ("scale", "bias"))
    channels = data.shape[1]
    if groups < 1 or channels % groups:
        raise InvalidLayer(layer, f"{channels} channels cannot be split into {groups} groups")
    per_group = channels // groups
    v = data.astype(np.float64)
    out = np.empty(data.shape, np.float64)
    spatial = [range(d) for d in data.shape[2:]]
    for n in range(data.shape[0]):
        for grp in range(groups):
            idx = [(n, c) + s for c in range(grp * per_group, (grp + 1) * per_group)
                   for s in itertools.product(*spatial)]
            if not idx:
                continue
            mean = math.fsum(v[i] for i in idx) / len(idx)
            var = math.fsum((v[i] - mean) ** 2 for i in idx) / len(idx)
            denom = math.sqrt(var + eps)
            for i in idx:
                out[i] = scale[i[1]] * (v[i] - mean) / denom + bias[i[1]]
    return [out.astype(data.dtype)]


def _batch_norm(layer, data, gamma, beta, mean, var):
    eps = float(layer.attrs["epsilon"])
    gamma, beta, mean, var = _per_channel_params(layer, data, (gamma, beta, mean, var),
                                                 ("gamma", "beta", "mean", "variance"))
    v = data.astype(np.float64)
    out = np.empty(data.shape, np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        for i in np.ndindex(*data.shape):
            c = i[1]
            out[i] = gamma[c] * (v[i] - mean[c]) / np.sqrt(var[c] + eps) + beta[c]
    return [out.astype(data.dtype)]


@oracle("BatchNormInference", "opset5")
def batch_norm_inference5(layer, inputs):
    data, gamma, beta, mean, var = inputs
    return _batch_norm(layer, data, gamma, beta, mean, var)


@oracle("BatchNormInference", "opset1")
def batch_norm_inference1(layer, inputs):
    gamma, beta, data, mean, var = inputs
    return _batch_norm(layer, data, gamma, beta, mean, var)


# -- NormalizeL2 -----------------------------------------------------------------------------
@oracle("NormalizeL2", "opset1")
def normalize_l2(layer, inputs):
    x, axes = inputs
    v = as_float64(layer, x)
    picked = {normalize_axis(layer, int(a), x.ndim) for a in np.asarray(axes).reshape(-1)}
    if not picked:
        raise UnsupportedLayer(layer, "NormalizeL2 over no axes")
    eps, mode = float(layer.attrs["eps"]), layer.attrs["eps_mode"]
    out = np.empty(v.shape, np.float64)
    for pos in itertools.product(*[range(d) for d in v.shape]):
        ranges = [range(v.shape[i]) if i in picked else [pos[i]] for i in range(v.ndim)]
        total = sum(v[src] * v[src] for src in itertools.product(*ranges))
        total = max(total, eps) if mode == "max" else total + eps
        if total == 0:
            raise InvalidLayer(layer, "NormalizeL2 of a zero slice with eps 0")
        out[pos] = v[pos] / math.sqrt(total)
    return [out.astype(x.dtype)]
