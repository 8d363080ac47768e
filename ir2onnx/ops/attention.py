"""ScaledDotProductAttention-13 (OpenVINO fuses plain PyTorch attention into it), decomposed:

    Softmax(MatMul(q, Transpose(k)) * scale + bias, axis=-1) @ v

``scale`` defaults to 1/sqrt(E) (E = the last dim of q; computed at run time when dynamic).
``bias``: causal -> the upper triangle (j > i) of an [L, S] matrix is -inf (a constant when L and
S are small and known, else Range, Less, Where); a boolean mask m -> Where(m, 0, -inf); a float
mask is added as is. Batch dims broadcast numpy-style (as MatMul does).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.inputs import float_input
from ..lowering.registry import lowers
from ..lowering.shapes import dims_of, i64

SMALL = 4096  # causal biases of at most this many elements are constants


def _causal_bias(g, q, k, dtype) -> str:
    L, S = q.shape[-2], k.shape[-2]
    if L is not None and S is not None and L * S <= SMALL:
        bias = np.where(np.arange(S)[None, :] > np.arange(L)[:, None], -np.inf, 0).astype(dtype)
        return g.const(bias, dtype, "causal_bias")
    rank_q, rank_k = len(q.shape), len(k.shape)
    zero, one = i64(g, 0), i64(g, 1)
    rows = g.Range(zero, g.Squeeze(dims_of(g, q, rank_q - 2, rank_q - 1), i64(g, [0])), one)
    cols = g.Range(zero, g.Squeeze(dims_of(g, k, rank_k - 2, rank_k - 1), i64(g, [0])), one)
    above = g.Less(g.Unsqueeze(rows, i64(g, [1])), cols)  # [L, S]: j > i
    return g.Where(above, g.const(-np.inf, dtype, "minus_inf"), g.const(0, dtype, "zero"))


def _scale(g, layer, q, scale_v, dtype):
    if scale_v is not None:
        if scale_v.shape is not None and int(np.prod(scale_v.shape)) != 1:
            raise InvalidLayer(layer, f"scale must be a scalar, got shape {list(scale_v.shape)}")
        return scale_v if scale_v.shape in ((), None) else g.Reshape(scale_v, g.const([], np.int64, "scalar"))
    e = q.shape[-1]
    if e is not None:
        return g.const(1 / np.sqrt(np.float64(e)), dtype, "scale")
    rank = len(q.shape)
    size = g.Cast(dims_of(g, q, rank - 1, rank), to=q.etype.onnx)
    return g.Reciprocal(g.Sqrt(g.Squeeze(size, i64(g, [0]))))


def _check_batch(layer, *shapes) -> None:
    batch = [s[:-2] for s in shapes]
    rank = max(len(b) for b in batch)
    for axis in range(1, rank + 1):
        dims = {b[-axis] for b in batch if len(b) >= axis and b[-axis] is not None} - {1}
        if len(dims) > 1:
            raise UnsupportedLayer(layer, "batch dims " + ", ".join(str(list(b)) for b in batch)
                                   + " do not broadcast numpy-style (repetition is not supported)")


@lowers("ScaledDotProductAttention", "opset13")
def sdpa(ctx, layer, inputs):
    """ScaledDotProductAttention-13 -> Transpose, MatMul, Mul, Add, Softmax, MatMul (causal: a
    constant bias or Range, Less, Where; boolean mask: Where)."""
    q, k, v = inputs[:3]
    mask = inputs[3] if len(inputs) > 3 else None
    scale_v = inputs[4] if len(inputs) > 4 else None
    float_input(ctx, layer, q)
    for other in (k, v) + ((scale_v,) if scale_v is not None else ()):
        if other.etype != q.etype:
            raise InvalidLayer(layer, f"inputs must share query's element type {q.etype.name}, got {other.etype.name}")
    if any(x.shape is None for x in (q, k, v)):
        raise UnsupportedLayer(layer, "query, key and value need a known rank")
    if min(len(q.shape), len(k.shape), len(v.shape)) < 3:
        raise InvalidLayer(layer, "query, key and value need rank >= 3")
    e_q, e_k = q.shape[-1], k.shape[-1]
    if e_q is not None and e_k is not None and e_q != e_k:
        raise InvalidLayer(layer, f"query and key embedding sizes differ ({e_q} and {e_k})")
    s_k, s_v = k.shape[-2], v.shape[-2]
    if s_k is not None and s_v is not None and s_k != s_v:
        raise InvalidLayer(layer, f"key and value sequence lengths differ ({s_k} and {s_v})")
    _check_batch(layer, q.shape, k.shape, v.shape)
    g, dtype = ctx.b, q.etype.numpy
    rank_k = len(k.shape)
    kt = g.Transpose(k, perm=list(range(rank_k - 2)) + [rank_k - 1, rank_k - 2])
    scores = g.Mul(g.MatMul(q, kt), _scale(g, layer, q, scale_v, dtype))
    if layer.attrs["causal"]:
        scores = g.Add(scores, _causal_bias(g, q, k, dtype))
    elif mask is not None and not (mask.is_const and not np.any(np.asarray(mask.value()))
                                   and mask.etype.name != "boolean"):
        if mask.etype.name == "boolean":
            bias = g.Where(mask, g.const(0, dtype, "zero"), g.const(-np.inf, dtype, "minus_inf"))
        elif mask.etype == q.etype:
            bias = mask
        else:
            raise InvalidLayer(layer, f"attention_mask must be boolean or {q.etype.name}, got {mask.etype.name}")
        scores = g.Add(scores, bias)
    return [g.MatMul(g.Softmax(scores, axis=-1), v)]
