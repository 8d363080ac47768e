"""Oracle of ScaledDotProductAttention-13, from the spec's pseudo-code, element by element in
float64: for every (broadcast) batch index and query row i, scores over key rows j, the causal
or mask bias, a softmax and the weighted sum of value rows."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _at(x: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """The [rows, cols] matrix of ``x`` at broadcast batch index ``batch``."""
    lead = x.shape[:-2]
    pos = batch[len(batch) - len(lead):] if lead else ()
    return x[tuple(0 if d == 1 else p for d, p in zip(lead, pos))]


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
    L, S, Ev = q.shape[-2], k.shape[-2], v.shape[-1]
    arrays = [q, k, v] + ([mask] if mask is not None and mask.ndim >= 2 and not causal else [])
    batch_shape = _batch_shape(layer, *arrays)
    out = np.empty(batch_shape + (L, Ev), np.float64)
    for batch in itertools.product(*[range(d) for d in batch_shape]):
        qm, km, vm = _at(q, batch), _at(k, batch), _at(v, batch)
        mm = _at(mask, batch) if mask is not None and mask.ndim >= 2 else mask
        for i in range(L):
            scores = []
            for j in range(S):
                s = math.fsum(qm[i, e] * km[j, e] for e in range(q.shape[-1])) * scale
                if causal:
                    s += -math.inf if j > i else 0.0
                elif mm is not None:
                    m = mm[min(i, mm.shape[0] - 1), j] if mm.ndim == 2 else mm.reshape(-1)[0]
                    s += (0.0 if m else -math.inf) if mm.dtype == np.bool_ else float(m)
                scores.append(s)
            top = max(scores)
            weights = [math.exp(s - top) if s != -math.inf else 0.0 for s in scores]
            total = math.fsum(weights)
            for e in range(Ev):  # a row masked everywhere: softmax of all -inf is NaN
                acc = math.fsum(w * vm[j, e] for j, w in enumerate(weights))
                out[batch + (i, e)] = acc / total if total else math.nan
    return [out.astype(inputs[0].dtype)]
