"""Oracles of GroupNormalization-12 and BatchNormInference-1/-5, from the specs, element by
element in float64 (rounded once to the data type)."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


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
