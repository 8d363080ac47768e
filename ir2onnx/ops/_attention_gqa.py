"""ScaledDotProductAttention as onnxruntime's ``com.microsoft.GroupQueryAttention``, where the IR's
attention is the decoder attention optimum-intel exports (Llama, Qwen2/3, Mistral, Phi-3, Gemma):

    q [B, H, S, D]                        (rotary applied in the graph)
    k = Concat(past_k, k_new, axis=2)     past_k: the cache (ReadValue, its beam_idx Gather, or a
    v = Concat(past_v, v_new, axis=2)     past_key_values input); the Concat is the next cache
    k, v repeated per query group (Unsqueeze -> Broadcast -> Reshape, ops/_attention_groups.py)
    mask = Select(causal AND attention_mask's padding [AND a sliding window], 0, <= -65504)
           [sliced to the keys' length, Gemma]

GroupQueryAttention computes the same softmax(q k^T * scale + mask) v for each query head h over
the KV head h // (H / kv), causal over the total sequence ``seqlens_k + 1`` (the attention
mask's row sums), within a window of the last ``local_window_size`` keys (onnxruntime 1.32's
kernel: a query at position q sees keys q-W+1 .. q, measured on a Mistral-style sample whose
window of 16 the decode crosses; W-1 or W+1 part from OpenVINO), and writes the new
keys and values into the cache at position ``seqlens_k + 1 - S``: the Concat, when the attention
mask is ones (what onnxruntime-genai feeds). Where the cache buffer is shared
(``past_present_share_buffer``), it writes in place. The rotary embedding stays in the graph (its
cos/sin are computed from position_ids as the IR computes them; GroupQueryAttention's own
rotary reads a cos/sin table, a different rounding).

Anything else (a mask built from other inputs, a causal SDPA, a float mask, a cache not
appended on axis 2, heads that do not divide) keeps the decomposed form: :func:`match` returns
the reason.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir.names import input_name
from ..lowering.builder import Value
from . import _attention_groups as groups
from ._common.shapes import i64

CACHE_SOURCES = ("ReadValue", "Parameter")
# what the mask's condition may be made of, besides the comparisons and the attention_mask
_MASK_OPS = {"BitwiseAnd", "LogicalAnd", "Broadcast", "Unsqueeze", "Squeeze", "Reshape", "Gather",
             "Convert", "Range", "Add", "Subtract", "Multiply", "ShapeOf", "Concat", "Split",
             "ReduceProd", "Slice", "StridedSlice", "Const", "Parameter", "ReadValue", "Transpose"}


@dataclass
class Match:
    """One SDPA that GroupQueryAttention computes exactly."""

    heads: int
    kv_heads: int
    head_size: int
    scale: float
    window: int  # local_window_size: -1 none, else W: each query sees its last W keys
    key_concat: object  # the Concat layers that append to the caches
    value_concat: object
    attention_mask: object  # its Parameter layer


def _producer(graph, layer, i: int):
    if i >= len(layer.sources) or layer.sources[i].layer not in graph.layers:
        return None
    return graph.layers[layer.sources[i].layer]


def _const(layer):
    if layer is None or layer.type != "Const" or layer.const is None:
        return None
    return np.asarray(layer.const.array())


def _cache_concat(graph, layer, index: int):
    """The Concat that feeds SDPA input ``index`` (through repeat_kv when the KV heads are fewer);
    None when it is not an append to a cache on axis 2."""
    src = _producer(graph, layer, index)
    if src is None:
        return None
    if src.type == "Reshape":  # repeat_kv: Reshape(Broadcast(Unsqueeze(cache, 2)))
        broadcast = _producer(graph, src, 0)
        unsqueeze = _producer(graph, broadcast, 0) if broadcast is not None and broadcast.type == "Broadcast" else None
        if unsqueeze is None or unsqueeze.type != "Unsqueeze":
            return None
        src = _producer(graph, unsqueeze, 0)
    if src is None or src.type != "Concat" or len(src.sources) != 2:
        return None
    shape = src.outputs[0].shape
    if shape is None or len(shape) != 4 or int(src.attrs.get("axis", 0)) % 4 != 2:
        return None
    past = _producer(graph, src, 0)
    while past is not None and past.type in ("Gather", "Convert"):  # beam_idx reorder
        past = _producer(graph, past, 0)
    if past is None or past.type not in CACHE_SOURCES:
        return None
    if src.sources[0].output != 0 or shape[1] is None or shape[3] is None:
        return None
    return src


def _ancestors(graph, start: str) -> set:
    seen, stack = set(), [start]
    while stack:
        lid = stack.pop()
        if lid in seen:
            continue
        seen.add(lid)
        layer = graph.layers[lid]
        if layer.type == "ShapeOf":  # a shape only: what made the tensor does not matter
            continue
        stack.extend(s.layer for s in layer.sources)
    return seen


def _mask(graph, select):
    """(window, attention_mask Parameter) of a Select(cond, 0, -big) built by transformers'
    causal mask from attention_mask, or a str saying why not."""
    if select is not None and select.type == "Slice" and len(select.sources) == 5:
        start, step, axes = (_const(_producer(graph, select, i)) for i in (1, 3, 4))
        if any(x is None or x.size != 1 for x in (start, step, axes)) or int(start.reshape(-1)[0]) != 0 \
                or int(step.reshape(-1)[0]) != 1 or int(axes.reshape(-1)[0]) not in (3, -1):
            return "the mask is sliced other than [..., :T]"
        select = _producer(graph, select, 0)  # its first T columns: the mask of keys 0 .. T-1
    if select is None or select.type != "Select":
        return "the mask is not a Select of a boolean condition"
    zero, low = _const(_producer(graph, select, 1)), _const(_producer(graph, select, 2))
    if zero is None or low is None or zero.size != 1 or low.size != 1 or float(zero.reshape(-1)[0]) != 0 \
            or not float(low.reshape(-1)[0]) <= -65504.0:
        return "the mask is not Select(condition, 0, -65504 or less)"
    layers = [graph.layers[i] for i in _ancestors(graph, select.sources[0].layer)]
    others = sorted({l.type for l in layers} - _MASK_OPS - {"LessEqual", "Greater"})
    if others:
        return f"the mask's condition holds {', '.join(others)}"
    params = [l for l in layers if l.type == "Parameter"]
    names = {input_name(p) for p in params}
    if len(params) != 1 or names != {"attention_mask"}:
        return "the mask's condition reads inputs other than attention_mask"
    le = [l for l in layers if l.type == "LessEqual"]
    gt = [l for l in layers if l.type == "Greater"]
    if len(le) != 1 or len(gt) > 1:
        return "the mask is not one causal comparison (and at most one sliding window)"
    kv_index, q_index = _producer(graph, le[0], 0), _producer(graph, le[0], 1)
    kv_shape, q_shape = kv_index.outputs[0].shape, q_index.outputs[0].shape
    if kv_shape is None or q_shape is None or len(kv_shape) != 4 or len(q_shape) != 4 \
            or kv_shape[2] != 1 or q_shape[3] != 1:  # kv index [.., 1, T] <= query index [.., S, 1]
        return "the causal comparison is not key index <= query index"
    window = -1
    if gt:  # sliding window: key index > query index - W
        left, right = _producer(graph, gt[0], 0), _producer(graph, gt[0], 1)
        if left is not kv_index or right is None or right.type != "Add":
            return "the sliding window is not key index > query index - W"
        a, b = _producer(graph, right, 0), _producer(graph, right, 1)
        w = _const(b) if a is q_index else _const(a) if b is q_index else None
        if w is None or w.size != 1 or int(w.reshape(-1)[0]) >= 0:
            return "the sliding window is not key index > query index - W"
        window = -int(w.reshape(-1)[0])  # keys q-W+1 .. q: onnxruntime's local_window_size W (measured)
    return window, params[0]


def match(ctx, layer, q: Value, k: Value, v: Value, scale_v: Value | None):
    """The :class:`Match` of SDPA ``layer``, or a str saying why GroupQueryAttention does not
    compute it."""
    graph = ctx.graph
    if graph is not ctx.top:
        return "inside a loop body"
    if layer.attrs.get("causal"):
        return "causal SDPA (its mask is aligned top-left)"
    if len(layer.sources) < 4 or q.shape is None or len(q.shape) != 4 or q.etype.name != "f32":
        return "not an f32 [batch, heads, tokens, head size] query with a mask"
    heads, head_size = q.shape[1], q.shape[3]
    if heads is None or head_size is None:
        return "the query's heads or head size are dynamic"
    kc, vc = _cache_concat(graph, layer, 1), _cache_concat(graph, layer, 2)
    if kc is None or vc is None:
        return "key or value is not a KV cache appended on axis 2 (and repeated per group)"
    kv = kc.outputs[0].shape[1]
    if vc.outputs[0].shape[1] != kv or heads % kv or kc.outputs[0].shape[3] != head_size \
            or vc.outputs[0].shape[3] != head_size:
        return "the heads do not group evenly, or key, value and query head sizes differ"
    if kv != heads:  # head h reads KV head h // rep: what repeat_kv's Unsqueeze, Broadcast, Reshape make
        rk, rv = groups.repeated(ctx, layer, 1), groups.repeated(ctx, layer, 2)
        if rk is None or rv is None or {(rk.kv, rk.rep), (rv.kv, rv.rep)} != {(kv, heads // kv)}:
            return "key and value are not repeated to the query's heads by repeat_kv"
    if scale_v is None:
        scale = float(1 / np.sqrt(np.float64(head_size)))
    elif scale_v.is_const and np.asarray(scale_v.value()).size == 1:
        scale = float(np.asarray(scale_v.value()).reshape(-1)[0])
    else:
        return "the scale is not a constant"
    found = _mask(graph, _producer(graph, layer, 3))
    if isinstance(found, str):
        return found
    window, param = found
    return Match(heads, kv, head_size, scale, window, kc, vc, param)


def _bsh(g, x, heads: int, size: int) -> str:
    """[B, heads, S, size] -> [B, S, heads * size]."""
    return g.Reshape(g.Transpose(x, perm=[0, 2, 1, 3]), i64(g, [0, 0, heads * size]))


def emit(ctx, m: Match, q: Value) -> tuple[str, str, str]:
    """GroupQueryAttention for match ``m`` (``q`` the rotated query [B, H, S, D]): the output as
    [B, H, S, D] and the new key and value caches."""
    g = ctx.b
    values = ctx.values
    lengths = ctx.memo.get("gqa_lengths")
    if lengths is None:  # seqlens_k: row sums - 1; total_sequence_length: the mask's width
        mask = values[(m.attention_mask.id, 0)]
        sums = g.ReduceSum(g.Cast(mask, to=7), i64(g, [1]), keepdims=0)
        seqlens = g.Cast(g.Sub(sums, i64(g, 1)), to=6)
        total = g.Cast(g.Gather(g.Shape(mask), i64(g, 1), axis=0), to=6)
        lengths = ctx.memo["gqa_lengths"] = (seqlens, total)
    past_k = values[(m.key_concat.sources[0].layer, m.key_concat.sources[0].output)]
    past_v = values[(m.value_concat.sources[0].layer, m.value_concat.sources[0].output)]
    new_k = values[(m.key_concat.sources[1].layer, m.key_concat.sources[1].output)]
    new_v = values[(m.value_concat.sources[1].layer, m.value_concat.sources[1].output)]
    out, present_k, present_v = g.op(
        "GroupQueryAttention", _bsh(g, q, m.heads, m.head_size), _bsh(g, new_k, m.kv_heads, m.head_size),
        _bsh(g, new_v, m.kv_heads, m.head_size), past_k, past_v, *lengths, _outputs=3,
        domain="com.microsoft", num_heads=m.heads, kv_num_heads=m.kv_heads, scale=m.scale,
        local_window_size=m.window)
    heads = g.Reshape(out, i64(g, [0, 0, m.heads, m.head_size]))
    return g.Transpose(heads, perm=[0, 2, 1, 3]), present_k, present_v
