"""Oracle of ScaledDotProductAttention-13, from the spec's pseudo-code in float64, every
(broadcast) batch index and query row at once: scores q_i . k_j * scale over key rows j, the
causal or mask bias, a softmax and the weighted sum of value rows."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _batch_shape(layer, *arrays) -> tuple[int, ...]:
    rank = max(a.ndim - 2 for a in arrays)
    out = []
    for axis in range(rank):
        dims = {a.shape[:-2][axis - rank + a.ndim - 2] for a in arrays if axis - rank + a.ndim - 2 >= 0}
        if len(dims - {1}) > 1:
            raise InvalidLayer(layer, "batch dims do not broadcast")
        out.append(max(dims))
    return tuple(out)


@oracle("ScaledDotProductAttention", "opset13")
def sdpa(layer, inputs):
    q, k, v = (a.astype(np.float64) for a in inputs[:3])
    mask = inputs[3] if len(inputs) > 3 else None
    scale = float(inputs[4].reshape(-1)[0]) if len(inputs) > 4 else 1 / math.sqrt(q.shape[-1])
    causal = bool(layer.attrs["causal"])
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise InvalidLayer(layer, "query/key/value sizes do not match")
    L, S = q.shape[-2], k.shape[-2]
    masked = mask is not None and not causal
    _batch_shape(layer, *([q, k, v] + ([mask] if masked and mask.ndim >= 2 else [])))  # broadcasts?
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        scores = np.matmul(q, np.swapaxes(k, -1, -2)) * scale  # [..., L, S]: q_i . k_j * scale
        if causal:  # key j > query i is masked
            scores = scores + np.where(np.arange(S)[None, :] > np.arange(L)[:, None], -math.inf, 0.0)
        elif masked:  # broadcast over [..., L, S]; a boolean mask keeps True, an additive one adds
            scores = scores + (np.where(mask, 0.0, -math.inf) if mask.dtype == np.bool_
                               else mask.astype(np.float64))
        top = scores.max(axis=-1, keepdims=True)
        weights = np.where(scores == -math.inf, 0.0, np.exp(scores - top))
        total = weights.sum(axis=-1, keepdims=True)
        # a row masked everywhere: softmax of all -inf is NaN
        out = np.where(total == 0, math.nan, np.matmul(weights, v) / total)
    return [out.astype(inputs[0].dtype)]
