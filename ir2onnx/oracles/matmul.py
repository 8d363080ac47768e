"""Oracles of MatMul-1 and Transpose-1, from the specs, by index arithmetic."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


@oracle("MatMul", "opset1")
def matmul(layer, inputs):
    """out[..., i, j] = sum_k A'[..., i, k] * B'[..., k, j]; 1-D operands become a row (A) or a
    column (B) vector whatever the transpose flags, and that axis is dropped from the result.
    Floats accumulate in float64; integers wrap modulo 2^bits."""
    a, b = inputs
    if a.dtype != b.dtype or a.ndim == 0 or b.ndim == 0:
        raise InvalidLayer(layer, "operands must share a type and have rank >= 1")
    a_vec, b_vec = a.ndim == 1, b.ndim == 1

    def get_a(batch, i, k):
        if a_vec:
            return a[k]
        idx = batch[len(batch) - (a.ndim - 2):] if a.ndim > 2 else ()
        idx = tuple(0 if d == 1 else p for d, p in zip(a.shape[:-2], idx))
        return a[idx + ((k, i) if layer.attrs.get("transpose_a") else (i, k))]

    def get_b(batch, k, j):
        if b_vec:
            return b[k]
        idx = batch[len(batch) - (b.ndim - 2):] if b.ndim > 2 else ()
        idx = tuple(0 if d == 1 else p for d, p in zip(b.shape[:-2], idx))
        return b[idx + ((j, k) if layer.attrs.get("transpose_b") else (k, j))]

    ta, tb = bool(layer.attrs.get("transpose_a")) and not a_vec, bool(layer.attrs.get("transpose_b")) and not b_vec
    m, k_a = (1, a.shape[0]) if a_vec else ((a.shape[-1], a.shape[-2]) if ta else a.shape[-2:])
    k_b, n = (b.shape[0], 1) if b_vec else ((b.shape[-1], b.shape[-2]) if tb else b.shape[-2:])
    if k_a != k_b:
        raise InvalidLayer(layer, f"inner dimensions differ ({k_a} and {k_b})")
    ba, bb = a.shape[:-2], b.shape[:-2]
    rank = max(len(ba), len(bb))
    ba, bb = (1,) * (rank - len(ba)) + ba, (1,) * (rank - len(bb)) + bb
    batch_shape = []
    for x, y in zip(ba, bb):
        if x != y and 1 not in (x, y):
            raise InvalidLayer(layer, "batch dimensions do not broadcast")
        batch_shape.append(max(x, y) if 0 not in (x, y) else 0)
    integer = a.dtype.kind in "iu"
    out = np.zeros((*batch_shape, m, n), a.dtype)
    for batch in itertools.product(*[range(d) for d in batch_shape]):
        for i, j in itertools.product(range(m), range(n)):
            if integer:
                acc = sum(int(get_a(batch, i, k)) * int(get_b(batch, k, j)) for k in range(k_a))
                bits = a.dtype.itemsize * 8
                acc %= 1 << bits
                if a.dtype.kind == "i" and acc >= 1 << (bits - 1):
                    acc -= 1 << bits
            else:
                acc = sum(float(get_a(batch, i, k)) * float(get_b(batch, k, j)) for k in range(k_a))
            out[batch + (i, j)] = acc
    if a_vec:
        out = out.reshape(out.shape[:-2] + out.shape[-1:])
    if b_vec:
        out = out.reshape(out.shape[:-1])
    return [out]


@oracle("Transpose", "opset1")
def transpose(layer, inputs):
    """out[i_0, ..., i_{r-1}] = x[j] with j[order[a]] = i_a; an empty order reverses the axes."""
    x, order = inputs
    order = [int(v) for v in np.asarray(order).reshape(-1)] or list(range(x.ndim))[::-1]
    if sorted(order) != list(range(x.ndim)):
        raise InvalidLayer(layer, f"input_order {order} is not a permutation of {x.ndim} axes")
    out = np.empty(tuple(x.shape[a] for a in order), x.dtype)
    for pos in itertools.product(*[range(d) for d in out.shape]):
        src = [0] * x.ndim
        for axis, p in zip(order, pos):
            src[axis] = p
        out[pos] = x[tuple(src)]
    return [out]
