"""Multiply by a per-channel constant, then Add a per-channel constant, on [N, C, H, W] f32 data
(BatchNorm as OpenVINO writes it where it cannot fold it into a convolution: DenseNet's BN ->
ReLU -> Conv) -> one BatchNormalization(x, scale, bias, mean 0, var 1, epsilon 0).

onnxruntime runs BatchNormalization in its NCHWc layout beside the convolutions; a Mul and an Add
with broadcast [1, C, 1, 1] constants make it reorder the data out of that layout and back
around them (DenseNet-121: 61 ReorderInput and 62 ReorderOutput, against 1 for the exporters'
BatchNormalization; benchmarks/bench_models.py). With mean 0, var 1 and epsilon 0 the node
computes x * scale + bias, what the Mul and the Add computed.
"""
from __future__ import annotations

import numpy as np

from ..lowering.builder import LazyValue, Value


def _per_channel(x: Value, c: Value) -> np.ndarray | None:
    """``c``'s values as a [C] vector when it is a constant that only varies over dim 1 of the
    4-D ``x`` (shape [1, C, 1, 1], [C, 1, 1] or a broadcast one), else None."""
    if not c.is_const or c.etype != x.etype or c.shape is None or len(c.shape) > 4:
        return None
    channels = x.shape[1]
    full = (1,) * (4 - len(c.shape)) + tuple(c.shape)
    if full[0] != 1 or full[2:] != (1, 1) or full[1] not in (1, channels):
        return None
    return np.broadcast_to(np.asarray(c.value()).reshape(-1), (channels,)).astype(x.etype.numpy)


def scaled(ctx, x: Value, scale: Value) -> LazyValue | None:
    """Mul(x, scale) as a value that a following per-channel Add takes as a BatchNormalization,
    or None when this is not a per-channel scale of 4-D f32 data with a static channel count."""
    if x.etype.name != "f32" or x.shape is None or len(x.shape) != 4 or x.shape[1] is None:
        return None
    s = _per_channel(x, scale)
    if s is None:
        return None
    g = ctx.b
    out = LazyValue(g, x.etype, x.shape, lambda: g.Mul(x, scale))

    def absorb(other: Value):
        b = _per_channel(x, other)
        if b is None:
            return None
        c = len(s)
        name = g.BatchNormalization(x, g.const(s, np.float32, "bn_scale"), g.const(b, np.float32, "bn_bias"),
                                    g.const(np.zeros(c, np.float32), np.float32, "bn_mean"),
                                    g.const(np.ones(c, np.float32), np.float32, "bn_var"), epsilon=0.0)
        return Value(g, x.etype, x.shape, name=name)

    out.absorb_add = absorb
    return out
