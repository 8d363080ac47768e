"""A KV cache reordered by beam_idx, then appended to, without the reorder's copy when it reorders
nothing.

optimum-intel's stateful LLMs read each cache as ``Gather(ReadValue, beam_idx, axis 0)`` and
append the new keys or values with a Concat. beam_idx is ``arange(batch)`` at every step but
those of a beam search that drop or repeat beams, and gathering the rows ``0 .. n-1`` of an
``n``-row tensor gives the tensor back. So the pair becomes::

    If(beam_idx == arange(len(beam_idx)) and len(beam_idx) == rows of the cache,
       then: Concat(cache, new ...), else: Concat(Gather(cache, beam_idx, axis 0), new ...))

Both branches compute what the Gather and the Concat compute. The then-branch leaves out one copy
of every cache per step (at a 2,000-token context, about a fifth of the decode time of a 110M
Llama-style model: 3 of 16 ms). The Concat sits in the branches because onnxruntime copies a branch output
that is an outer value, and writes one that a branch node makes in place.

The Gather itself is emitted only when something other than such a Concat reads it; its shape
is ``shape(beam_idx) + shape(cache)[1:]`` without it (:meth:`Reordered.shape_vector`). The If
carries :data:`REORDER_IF` as its doc string: ``--genai`` and ``--optimum``, which drop
beam_idx, keep its then-branch (:func:`ir2onnx.llm.genai.prepare`).
"""
from __future__ import annotations

from ..lowering.builder import LazyValue, Value
from ._common.shapes import dims_of, i64

REORDER_IF = "ir2onnx: a KV cache reorder by beam_idx; then-branch: beam_idx is arange(batch)"


class Reordered(LazyValue):
    """``Gather(state, order, axis=0)``, emitted only when read."""

    def __init__(self, b, state: Value, order: Value, shape):
        super().__init__(b, state.etype, shape, lambda: b.Gather(state, order, axis=0))
        self.state, self.order = state, order

    def shape_vector(self, b) -> str:
        """The Gather's shape without the Gather: shape(order) + shape(state)[1:]."""
        return b.Concat(b.Shape(self.order), dims_of(b, self.state, 1), axis=0)


def reordered(ctx, data: Value, indices: Value, shape) -> Value:
    """The cache reorder ``Gather(data, indices, axis 0)`` (indices: a 1-D model input); a plain
    Gather outside the ``onnxruntime`` target (the other runtimes' If is their own matter)."""
    if indices.shape is None or len(indices.shape) != 1 or not ctx.target.onnxruntime_forms:
        return Value(ctx.b, data.etype, shape, name=ctx.b.Gather(data, indices, axis=0))
    return Reordered(ctx.b, data, indices, shape)


def _is_arange(ctx, order: Value) -> tuple[str, str]:
    """(``order == arange(len(order))`` for every element, as a bool scalar; ``shape(order)``),
    made once per model."""
    key = ("reorder_arange", order.name)
    if key not in ctx.memo:
        g = ctx.b
        n = g.Shape(order)
        idx = order.name if order.etype.name == "i64" else g.Cast(order, to=7)
        rows = g.Range(i64(g, 0), g.Squeeze(n, i64(g, [0])), i64(g, 1))
        moved = g.ReduceSum(g.Cast(g.Not(g.Equal(idx, rows)), to=7), keepdims=0)
        ctx.memo[key] = (g.Equal(moved, i64(g, 0)), n)
    return ctx.memo[key]


def concat(ctx, inputs: list[Value], axis: int, etype, shape) -> str | None:
    """Concat of ``inputs`` whose first is a :class:`Reordered` as the If above, else None (a
    Gather that something else reads is emitted for that reader; the If's branches do not use it)."""
    first = inputs[0]
    if not isinstance(first, Reordered) or any(isinstance(v, Reordered) for v in inputs[1:]):
        return None
    g = ctx.b
    for v in (first.state, first.order, *inputs[1:]):
        v.name  # emitted in the outer graph, where both branches see it
    arange, n = _is_arange(ctx, first.order)
    cond = g.And(g.Equal(dims_of(g, first.state, 0, 1), n), arange)

    def branch(gather: bool):
        data = g.Gather(first.state, first.order, axis=0) if gather else first.state
        return [(g.Concat(data, *inputs[1:], axis=axis), etype, shape)]

    out = g.op("If", cond, then_branch=g.subgraph(lambda: branch(False)),
               else_branch=g.subgraph(lambda: branch(True)))
    g.nodes[-1].doc_string = REORDER_IF
    return out
