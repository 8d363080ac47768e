"""NNCF-style INT8 IRs built with ``openvino.opset``, for tests and benchmarks.

NNCF's INT8 models are float models with FakeQuantize layers: on activations (per tensor,
levels 256, ranges that put zero on a level: ``[0, 255 s]`` after ReLU, ``[-128 s, 127 s]``
otherwise) and on weights (per output channel, levels 255, symmetric ``[-127 s_c, 127 s_c]``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import ov_parameter, ov_save


def fake_quantize(x, lo, hi, levels: int = 256):
    """FakeQuantize with input range == output range."""
    import openvino.opset15 as ops

    lo, hi = (ops.constant(np.asarray(v, np.float32)) for v in (lo, hi))
    return ops.fake_quantize(x, lo, hi, lo, hi, levels)


def activation_fq(x, bound: float, relu: bool):
    """Per-tensor u8 (after ReLU) or i8-like (signed) activation FakeQuantize, NNCF style."""
    s = np.float32(bound / (255 if relu else 128))
    return fake_quantize(x, 0.0 if relu else -128 * s, 255 * s if relu else 127 * s)


def weight_fq(w: np.ndarray, compress: bool):
    """Const (f16 -> Convert f32 when ``compress``) -> per-channel symmetric FakeQuantize-255."""
    import openvino.opset15 as ops

    hi = np.abs(w).reshape(w.shape[0], -1).max(axis=1).reshape((-1,) + (1,) * (w.ndim - 1))
    c = ops.convert(ops.constant(w.astype(np.float16)), np.float32) if compress else ops.constant(w)
    return fake_quantize(c, -hi, hi, 255)


def resnet(path, blocks: int = 3, channels: int = 16, size: int = 32, seed: int = 0,
           compress: bool = True) -> Path:
    """Conv stem + ``blocks`` residual blocks (Conv-ReLU-Conv + skip, ReLU), every Conv fed by
    FakeQuantized activations and weights; global average pool + a quantized MatMul head.
    Outputs: the logits and the last block's quantized feature map (step 4/255)."""
    import openvino.opset15 as ops

    rng = np.random.default_rng(seed)
    x = ov_parameter([None, 3, size, size])

    def conv(t, cin, cout, bound, relu_in, quantize=True):
        w = (rng.standard_normal((cout, cin, 3, 3)) * np.sqrt(2 / (cin * 9))).astype(np.float32)
        t = activation_fq(t, bound, relu_in) if quantize else t
        y = ops.convolution(t, weight_fq(w, compress), [1, 1], [1, 1], [1, 1], [1, 1])
        bias = (rng.standard_normal((1, cout, 1, 1)) * 0.1).astype(np.float32)
        return ops.add(y, ops.convert(ops.constant(bias.astype(np.float16)), np.float32) if compress
                       else ops.constant(bias))

    t = activation_fq(ops.relu(conv(x, 3, channels, 3.0, False)), 4.0, True)
    for _ in range(blocks):  # NNCF quantizes both inputs of the residual Add; t is quantized
        y = ops.relu(conv(t, channels, channels, 4.0, True, quantize=False))
        y = activation_fq(conv(y, channels, channels, 4.0, True), 4.0, False)
        t = activation_fq(ops.relu(ops.add(y, t)), 4.0, True)
    pooled = ops.reduce_mean(t, ops.constant(np.array([2, 3])), False)
    w = (rng.standard_normal((10, channels)) * 0.3).astype(np.float32)
    logits = ops.matmul(activation_fq(pooled, 4.0, True), weight_fq(w, compress), False, True)
    return ov_save(path, [logits, t], [x])


def transformer_block(path, tokens: int = 64, dim: int = 128, heads: int = 4, seed: int = 0,
                      compress: bool = True) -> Path:
    """One pre-norm-free encoder block: Q/K/V/O projections and a 4x MLP as quantized MatMuls
    (activation and weight FakeQuantize), softmax attention in float, residual adds."""
    import openvino.opset15 as ops

    rng = np.random.default_rng(seed)
    x = ov_parameter([None, tokens, dim])

    def linear(t, cin, cout, bound):
        w = (rng.standard_normal((cout, cin)) / np.sqrt(cin)).astype(np.float32)
        return ops.matmul(activation_fq(t, bound, False), weight_fq(w, compress), False, True)

    def split_heads(t):
        t = ops.reshape(t, ops.constant(np.array([0, 0, heads, dim // heads])), True)
        return ops.transpose(t, ops.constant(np.array([0, 2, 1, 3])))

    q, k, v = (split_heads(linear(x, dim, dim, 4.0)) for _ in range(3))
    att = ops.softmax(ops.multiply(ops.matmul(q, k, False, True),
                                   ops.constant(np.float32(1 / np.sqrt(dim // heads)))), -1)
    ctx = ops.reshape(ops.transpose(ops.matmul(att, v, False, False), ops.constant(np.array([0, 2, 1, 3]))),
                      ops.constant(np.array([0, 0, dim])), True)
    h = ops.add(x, linear(ctx, dim, dim, 4.0))
    mlp = linear(ops.relu(linear(h, dim, 4 * dim, 4.0)), 4 * dim, dim, 4.0)
    return ov_save(path, ops.add(h, mlp), [x])
