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
from ..lowering.builder import Value
from ..lowering.registry import lowers
from . import _attention_gqa as gqa, _attention_groups as groups
from ._common.inputs import float_input
from ._common.shapes import dims_of, i64

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
    constant bias or Range, Less, Where; boolean mask: Where); key and value repeated per
    query group (repeat_kv): per group, without the repeated copies (:mod:`._attention_groups`);
    ``--target onnx`` at opset >= 23: Attention where it fits (:func:`_standard`).
    With ``attention="gqa"`` (``--genai``), an LLM's attention over its KV cache, where it matches,
    is one com.microsoft GroupQueryAttention instead (:mod:`._attention_gqa`)."""
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
    if ctx.attention == "gqa":  # onnxruntime's GroupQueryAttention, where it computes the same
        found = gqa.match(ctx, layer, q, k, v, scale_v)
        if isinstance(found, gqa.Match):
            out, present_k, present_v = gqa.emit(ctx, found, q)
            for concat, present in ((found.key_concat, present_k), (found.value_concat, present_v)):
                ctx.reroutes.append((ctx.values[(concat.id, 0)].name, present))
            ctx.stats["gqa"] = ctx.stats.get("gqa", 0) + 1
            return [out]
        ctx.stats.setdefault("gqa_refused", []).append(f"{layer.name}: {found}")
    g, dtype = ctx.b, q.etype.numpy
    if mask is not None and (layer.attrs["causal"] or (mask.is_const and not np.any(np.asarray(mask.value()))
                                                       and mask.etype.name != "boolean")):
        mask = None  # causal ignores the mask; an all-zero float mask adds nothing
    if mask is not None and mask.etype.name != "boolean" and mask.etype != q.etype:
        raise InvalidLayer(layer, f"attention_mask must be boolean or {q.etype.name}, got {mask.etype.name}")
    groups_k, groups_v = groups.repeated(ctx, layer, 1), groups.repeated(ctx, layer, 2)
    standard = _standard(ctx, layer, q, k, v, mask, scale_v, groups_k, groups_v)
    if standard is not None:
        return [standard]
    scale = _scale(g, layer, q, scale_v, dtype)
    if groups_k is not None and groups.fits(q, mask, groups_k, groups_v):  # GQA: no repeated K, V
        q5 = groups.grouped_query(g, q, groups_k)
        k5, v5 = groups_k.single, groups_v.single
        bias = None if mask is None else groups.mask_for_groups(g, _bias_value(g, mask, q), groups_k)
        out = _attention(g, layer, q5, k5, v5, scale, bias, dtype)
        shape = (q.shape[0], groups_k.kv, groups_k.rep, q.shape[2], v.shape[-1])
        return [groups.merged_heads(g, Value(g, q.etype, shape, name=out), groups_k)]
    bias = None if mask is None else _bias_value(g, mask, q)
    return [_attention(g, layer, q, k, v, scale, bias, dtype)]


def _standard(ctx, layer, q, k, v, mask, scale_v, groups_k, groups_v) -> str | None:
    """Attention-23 (the ``onnx`` target at opset >= 23: :mod:`ir2onnx.lowering.targets`) where
    it computes what the layer does, else None: f32 query, key and value of rank 4 [B, H, L, E]
    with equal batch dims (two dynamic ones taken as equal: Attention refuses a batch of 1 against
    a larger one at run time, where the IR would broadcast it; it computes nothing else), as many
    value heads as key heads, dividing the query heads (repeat_kv's key and value: one copy of
    each head, [B, kv, T, E]: Attention's grouped-query heads read key head h // (Hq / Hkv), as
    repeat_kv's copies do), a constant scale (f32, exact as an attribute) or none (Attention's
    default is 1/sqrt(E) too), a boolean (True: attend) or additive mask of rank <= 4
    broadcasting to [B, Hq, L, S]. Causal is the upper-left triangle in both."""
    if not ctx.target.opset23_forms or ctx.opset < 23 or q.etype.name != "f32":
        return None
    if scale_v is not None and not scale_v.is_const:
        return None
    if any(len(x.shape) != 4 for x in (q, k, v)) or (mask is not None and (mask.shape is None or len(mask.shape) > 4)):
        return None
    g = ctx.b
    if groups_k is not None and groups.fits(q, mask, groups_k, groups_v):
        heads = groups_k.kv
        batch = {q.shape[0]} | {r.single.shape[0] for r in (groups_k, groups_v)}
        k, v = (Value(g, q.etype, (r.single.shape[0], r.kv, r.single.shape[3], r.single.shape[4]),
                      name=g.Squeeze(r.single, i64(g, [2]))) for r in (groups_k, groups_v))
    else:
        heads = k.shape[1] if k.shape[1] == v.shape[1] else None
        batch = {x.shape[0] for x in (q, k, v)}
    if len(batch) != 1 or q.shape[1] is None or heads is None or q.shape[1] % heads:
        return None
    attrs = {"is_causal": 1} if layer.attrs["causal"] else {}
    if scale_v is not None:
        attrs["scale"] = float(np.asarray(scale_v.value(), np.float32).reshape(()))
    return g.Attention(q, k, v, *([mask] if mask is not None else []), **attrs)


def _bias_value(g, mask: Value, q: Value) -> Value:
    """The additive bias of a mask: a boolean mask m -> Where(m, 0, -inf); a float one as it is."""
    if mask.etype.name != "boolean":
        return mask
    dtype = q.etype.numpy
    return Value(g, q.etype, mask.shape, name=g.Where(mask, g.const(0, dtype, "zero"),
                                                       g.const(-np.inf, dtype, "minus_inf")))


def _attention(g, layer, q, k, v, scale, bias, dtype) -> str:
    """Softmax(q @ k^T * scale [+ causal or mask bias]) @ v over the last two axes."""
    rank_k = len(k.shape)
    kt = g.Transpose(k, perm=list(range(rank_k - 2)) + [rank_k - 1, rank_k - 2])
    scores = g.Mul(g.MatMul(q, kt), scale)
    if layer.attrs["causal"]:
        scores = g.Add(scores, _causal_bias(g, q, k, dtype))
    elif bias is not None:
        scores = g.Add(scores, bias)
    return g.MatMul(g.Softmax(scores, axis=-1), v)
