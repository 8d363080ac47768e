"""Oracles of RandomUniform-8 and Multinomial-13: samples of the spec's distributions from NumPy's
generator (seeded by the layer's seeds). Values cannot match another generator's; they agree
only where the distribution has one value (integers with max = min + 1, a class with all the
probability), which is what the selftest cases use."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _rng(layer) -> np.random.Generator:
    return np.random.default_rng([int(layer.attrs.get("global_seed") or 0), int(layer.attrs.get("op_seed") or 0)])


@oracle("RandomUniform", "opset8")
def random_uniform8(layer, inputs):
    shape, low, high = inputs
    low, high = np.asarray(low).reshape(()), np.asarray(high).reshape(())
    if not low < high:
        raise InvalidLayer(layer, "min_val must be below max_val")
    dims = [int(d) for d in np.asarray(shape).reshape(-1)]
    if low.dtype.kind in "iu":
        return [_rng(layer).integers(int(low), int(high), dims).astype(low.dtype)]
    return [_rng(layer).uniform(float(low), float(high), dims).astype(low.dtype)]


@oracle("Multinomial", "opset13")
def multinomial13(layer, inputs):
    probs, count = np.asarray(inputs[0], np.float64), int(np.asarray(inputs[1]).reshape(-1)[0])
    rows = probs.reshape(-1, probs.shape[-1])
    if layer.attrs.get("log_probs"):
        rows = np.exp(rows)
    etype = layer.attrs.get("convert_type")
    dtype = np.int32 if getattr(etype, "name", etype) == "i32" else np.int64
    rng = _rng(layer)
    out = np.array([rng.choice(len(r), size=count, p=r / r.sum()) for r in rows], dtype).reshape(
        (*probs.shape[:-1], count))
    return [out]
