"""Grouped-query attention without repeating the key and value heads.

OpenVINO's PyTorch frontend writes ``repeat_kv`` (Llama, Qwen2, Mistral, Gemma ... with fewer
KV heads than query heads) before ScaledDotProductAttention::

    k [B, kv, T, D] -> Unsqueeze(2) -> Broadcast([B', kv, rep, T', D]) -> Reshape [B', kv*rep, T', D]

Lowered op by op, the Expand writes ``rep`` copies of every layer's cache at every decode step
and the attention MatMuls read them all. Here the attention is computed per KV group instead:
the query heads ``h = g * rep + r`` are reshaped to ``[B, kv, rep, S, D]``, the key and value
are read as the Unsqueeze leaves them, ``[B, kv, 1, T, D]``, with no copy, MatMul broadcasts them
over ``rep`` (and a batch of 1 over B', as the Broadcast did), and the result is reshaped back to
``[B, kv*rep, S, Dv]``. Every score and output is the same dot product, over the same elements,
as with the repeated heads. The Broadcast and Reshape that made the repeated copy are then
unused and left out of the model (:func:`ir2onnx.lowering.node_lists.prune`).

The one thing the Broadcast did that the MatMuls do not: stretch a key and value of length
``T = 1`` to a longer target ``T'``. The value MatMul then raises a shape error in onnxruntime
where OpenVINO computes (docs/deviations.md). optimum-intel's target length is the cache's own
(``ShapeOf`` of the past plus the new tokens' count), so its LLMs never take that path; the copy
that keeping it would cost is one of each cache per layer and step (~3 ms of a 16 ms step at
2,000 tokens on the 110M bench model, onnxruntime's profiler).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..lowering.builder import Value
from ._common.shape_vectors import DimOf, elements_of
from ._common.shapes import dims_of, i64


@dataclass
class Groups:
    """One SDPA input made by repeat_kv: its heads before the repeat [B, kv, 1, T, D] (the
    Unsqueeze's output), and the group count and size."""

    single: Value
    kv: int
    rep: int


def repeated(ctx, layer, index: int) -> Groups | None:
    """The repeat_kv pattern feeding input ``index`` of SDPA ``layer``, or None."""
    g = ctx.graph

    def producer(of, i: int):
        if i >= len(of.sources) or of.sources[i].layer not in g.layers:
            return None
        return g.layers[of.sources[i].layer]

    reshape = producer(layer, index)
    if reshape is None or reshape.type != "Reshape" or reshape.sources[0].output != 0:
        return None
    broadcast = producer(reshape, 0)
    if broadcast is None or broadcast.type != "Broadcast" or len(broadcast.sources) != 2 \
            or str(broadcast.attrs.get("mode", "numpy")).lower() not in ("numpy", "bidirectional"):
        return None
    unsqueeze = producer(broadcast, 0)
    if unsqueeze is None or unsqueeze.type != "Unsqueeze":
        return None
    single = ctx.values.get((unsqueeze.id, 0))
    wide = ctx.values.get((broadcast.id, 0))
    target = ctx.values.get((broadcast.sources[1].layer, broadcast.sources[1].output))
    pattern = ctx.values.get((reshape.sources[1].layer, reshape.sources[1].output))
    out = reshape.outputs[0].shape
    if any(v is None or v.shape is None for v in (single, wide, target, pattern)) or out is None:
        return None
    s, w = single.shape, wide.shape
    if len(s) != 5 or len(w) != 5 or len(out) != 4 or s[2] != 1 or s[1] is None or s[1] != w[1] \
            or w[2] is None or s[4] is None or s[4] != w[4] or tuple(target.shape) != (5,):
        return None
    kv, rep, d = s[1], w[2], s[4]
    elements = elements_of(pattern)
    if elements is None or len(elements) != 4:
        return None
    special_zero = reshape.attrs.get("special_zero", False)
    first = elements[0] == DimOf(wide, 0) or (special_zero and elements[0] == 0)
    third = elements[2] in (-1, DimOf(wide, 3))
    if not first or elements[1] != kv * rep or not third or elements[3] != d:
        return None
    return Groups(single, kv, rep)


def grouped_query(g, q: Value, k: Groups) -> Value | None:
    """``q`` [B, kv*rep, S, D] as [B, kv, rep, S, D], or None when its heads do not fit."""
    if q.shape is None or len(q.shape) != 4 or q.shape[1] != k.kv * k.rep:
        return None
    shape = g.Concat(dims_of(g, q, 0, 1), i64(g, [k.kv, k.rep]), dims_of(g, q, 2, 4), axis=0)
    return Value(g, q.etype, (q.shape[0], k.kv, k.rep, q.shape[2], q.shape[3]), name=g.Reshape(q, shape))


def mask_for_groups(g, mask: Value, k: Groups) -> Value | None:
    """A mask or bias broadcast against [B, H, S, T], made to broadcast against [B, kv, rep, S, T]
    (None when its head dim is neither 1 nor H)."""
    shape = mask.shape
    if shape is None:
        return None
    if len(shape) <= 2:
        return mask
    heads = shape[-3]
    if heads == 1:  # [.., 1, S, T] -> [.., 1, 1, S, T]
        return Value(g, mask.etype, shape[:-2] + (1,) + shape[-2:],
                     name=g.Unsqueeze(mask, i64(g, [len(shape) - 2])))
    if heads == k.kv * k.rep:  # [.., H, S, T] -> [.., kv, rep, S, T]
        lead = len(shape) - 3
        dims = g.Concat(*([dims_of(g, mask, 0, lead)] if lead else []), i64(g, [k.kv, k.rep]),
                        dims_of(g, mask, lead + 1, lead + 3), axis=0)
        return Value(g, mask.etype, shape[:lead] + (k.kv, k.rep) + shape[-2:], name=g.Reshape(mask, dims))
    return None


def merged_heads(g, out: Value, k: Groups) -> str:
    """``out`` [B, kv, rep, S, Dv] back to [B, kv*rep, S, Dv]."""
    return g.Reshape(out, g.Concat(dims_of(g, out, 0, 1), i64(g, [k.kv * k.rep]), dims_of(g, out, 3, 5), axis=0))


def fits(q: Value, mask: Value | None, k: Groups, v: Groups | None) -> bool:
    """Whether the grouped form applies: the value repeated alike, the query's heads kv*rep, and a
    mask whose head dim is 1 or kv*rep."""
    if v is None or (v.kv, v.rep) != (k.kv, k.rep) or q.shape is None or len(q.shape) != 4 \
            or q.shape[1] != k.kv * k.rep:
        return False
    if mask is None or mask.shape is None:
        return mask is None
    return len(mask.shape) <= 2 or mask.shape[-3] in (1, k.kv * k.rep)
