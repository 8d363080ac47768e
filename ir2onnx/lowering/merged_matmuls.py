"""Sibling compressed MatMuls that read one input, as one MatMul: q/k/v, gate/up.

A transformer layer reads its normalized input through several MatMul(transpose_b) with
compressed weights: the attention's q, k and v projections, the MLP's gate and up. onnxruntime
runs each as its own MatMulNBits; at one token per step each is a short kernel that hands work
to the thread pool, and with thread spinning off (as the benchmarks run) waking the pool is a
large part of its time. The siblings' weights are concatenated along N into one weight in the
transposed blocked layout of :mod:`.dequantize_forms` and read by one DequantizeLinear and one
MatMul, whose output a Split cuts back into the layers' outputs::

    MatMul(x, W1^T), MatMul(x, W2^T), ...  ->  Split(MatMul(x, DequantizeLinear([W1; W2; ...]^T)))

Each output column is the dot product of the same row of x with the same dequantized column,
summed in the order onnxruntime's kernel takes for the wider N (bit-identical on the bench
model's decode at accuracy level 0; within 1e-5 relative in tests/test_merged_matmuls.py). Siblings are MatMul layers with transpose_b (not transpose_a) that read
the same tensor as A, each through a compressed weight that nothing else reads, whose forms
(:func:`.dequantize_forms.matmul_form`) have the same block, weight type, scale type and
zero-point presence (4-bit weights: an even N, so that each one's columns start on a byte).
Measured on the ~124M-parameter int8 Llama of ``benchmarks/bench_llm.py``: 85 -> 49 MatMulNBits,
~10% less time per token (docs/llm.md).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import TensorProto

from ..ir.element_types import TYPES
from ..ir.graph import Layer
from . import packing
from .builder import Deferred, Value
from .dequantize_forms import matmul_form


@dataclass(eq=False)
class _Member:
    layer: Layer
    match: object  # decompression.Match
    n: int
    k: int
    block: int
    scale: np.ndarray  # [N, K / block]
    zp: np.ndarray | None

    @property
    def key(self) -> tuple:
        m = self.match
        return (m.weight.etype.name, self.k, self.block, m.scale.dtype.str, self.zp is None)


def piece(ctx, layer: Layer, a: Value) -> Value | None:
    """The output of MatMul ``layer`` (A = ``a``) cut from its siblings' merged MatMul, which is
    emitted when the first of them is lowered; None when ``layer`` has no sibling."""
    if layer.id in ctx.merged:
        return ctx.merged[layer.id]
    mine = _member(ctx, layer)
    if mine is None:
        return None
    src = layer.sources[0]
    group = []
    for other, port in ctx.consumers().get((src.layer, src.output), []):
        member = mine if other is layer else _member(ctx, other) if port == 0 else None
        if member is not None and member.key == mine.key and all(x.layer is not other for x in group):
            group.append(member)
    if len(group) < 2:
        return None
    _emit(ctx, group, a)
    return ctx.merged[layer.id]


def _member(ctx, layer: Layer) -> _Member | None:
    if layer.type != "MatMul" or not layer.attrs.get("transpose_b") or layer.attrs.get("transpose_a") \
            or len(layer.sources) != 2 or layer.sources[1].output != 0:
        return None
    m = ctx.packed.get(layer.sources[1].layer)
    if m is None:
        return None
    readers = ctx.consumers().get((m.root.id, 0), [])
    if [(r.id, port) for r, port in readers] != [(layer.id, 1)]:
        return None
    form = matmul_form(ctx, m)
    if form is None:
        return None
    n, k = (int(d) for d in (m.reshape_to or m.weight.shape))
    if m.weight.etype.bits == 4 and n % 2:
        return None
    block, scale, zp = form
    return _Member(layer, m, n, k, block, scale, zp)


def _emit(ctx, group: list[_Member], a: Value) -> None:
    g = ctx.b
    first = group[0].match
    wtype, k, block = first.weight.etype, group[0].k, group[0].block
    sizes = [f.n for f in group]

    def data() -> np.ndarray:  # the transposed weights side by side: [K, N1 + N2 + ...], packed
        parts = [packing.transposed(f.match.weight, wtype, f.n, k).reshape(k, -1) for f in group]
        return np.concatenate(parts, axis=1).reshape(-1)

    weight = g.add_tensor(Deferred(data), wtype, (k, sum(sizes)), f"{first.chain[0].name}_merged")
    joined = lambda arrays: np.ascontiguousarray(np.concatenate([x.T for x in arrays], axis=1))  # noqa: E731
    scale = g.const(joined([np.asarray(f.scale, first.scale.dtype) for f in group]), first.scale.dtype, "dq_scale")
    if first.scale.dtype != np.float32:
        scale = g.Cast(scale, to=TensorProto.FLOAT)
    inputs = [weight, scale]
    if group[0].zp is not None:
        inputs.append(g.add_initializer(joined([f.zp for f in group]), wtype, "dq_zero_point"))
    product = g.MatMul(a, g.DequantizeLinear(*inputs, axis=0, block_size=block))
    outs = g.Split(product, g.const(sizes), axis=-1, _outputs=len(group))
    ctx.stats["merged_matmuls"] = ctx.stats.get("merged_matmuls", 0) + len(group)
    ctx.stats["merged_groups"] = ctx.stats.get("merged_groups", 0) + 1
    for f, name in zip(group, outs):
        ctx.merged[f.layer.id] = Value(g, TYPES["f32"], f.layer.outputs[0].shape, name=name)
