"""If-8, Loop-5 and TensorIterator-1: sub-graphs lowered recursively into ONNX If and Loop.

Outer values reach a body by name (ONNX's outer-scope capture), so invariant inputs cost nothing;
back edges become Loop's loop-carried values; a sliced input is a Slice of the outer tensor at the
iteration number; a concatenated output is a scan output (stacked on a new axis 0) moved to its
axis and merged with it (Transpose, Reshape).
"""
from __future__ import annotations

import numpy as np
from onnx import helper

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.element_types import element_type
from ..lowering.builder import Value
from ..lowering.registry import lowers
from ._control_flow_loop import loop, iteration_count

I64 = element_type("i64")
BOOL = element_type("boolean")
INT64_MAX = np.iinfo(np.int64).max


def _named(values) -> None:
    """Give every outer value its ONNX name before a body captures it (a lazily emitted value
    must not be emitted inside the body, where the outer graph cannot see it)."""
    for v in values:
        if not v.is_const:
            v.name


def _unify(a, b):
    """The shape both branches agree on: equal dims kept, others unknown; None if ranks differ."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def _scalar_bool(layer, b, v: Value) -> str:
    if v.etype != BOOL:
        raise InvalidLayer(layer, f"the condition must be boolean, got {v.etype.name}")
    if v.shape is not None and any(d not in (1, None) for d in v.shape):
        raise InvalidLayer(layer, f"the condition must hold one element, got shape {list(v.shape)}")
    return v.name if v.shape == () else b.Reshape(v, b.const([], np.int64))


@lowers("If", "opset8")
def if_op(ctx, layer, inputs):
    """If-8 -> If (then_branch: then_body, else_branch: else_body; a constant condition inlines
    the chosen body). Body Parameters are the outer values, captured by name."""
    b = ctx.b
    cond = inputs[0]
    bodies = [layer.bodies["then_body"], layer.bodies["else_body"]]
    _named(inputs[1:])

    def lower(body):
        seeds = {e.internal_layer_id: inputs[e.port] for e in body.inputs}
        outs = [next(e.internal_layer_id for e in body.outputs if e.port == k)
                for k in range(len(layer.outputs))]
        return ctx.body(body.graph, lambda: seeds, outs)

    if cond.is_const:
        flat = np.asarray(cond.value()).reshape(-1)
        if flat.size != 1:
            raise InvalidLayer(layer, f"the condition must hold one element, got {flat.size}")
        nodes, _, values = lower(bodies[0 if flat[0] else 1])
        b.nodes.extend(nodes)
        return values
    lowered = [lower(body) for body in bodies]
    c = _scalar_bool(layer, b, cond)
    graphs, names = [], [b.unique(f"{layer.name}/out") for _ in layer.outputs]
    for (nodes, infos, values), other in zip(lowered, reversed(lowered)):
        for info, v, w in zip(infos, values, other[2]):
            if v.etype != w.etype:
                raise InvalidLayer(layer, f"the branches give {v.etype.name} and {w.etype.name} "
                                          f"for one output")
        infos = [b.value_info(i.name, v.etype, _unify(v.shape, w.shape))
                 for i, v, w in zip(infos, values, other[2])]
        graphs.append(helper.make_graph(nodes, b.unique(f"{layer.name}/branch"), [], infos))
    b.op("If", c, _outputs=len(names), _names=names, then_branch=graphs[0], else_branch=graphs[1])
    return [Value(b, v.etype, _unify(v.shape, w.shape), name=n)
            for n, v, w in zip(names, lowered[0][2], lowered[1][2])]


@lowers("Loop", "opset5")
def loop5(ctx, layer, inputs):
    """Loop-5 -> Loop (trip count: Cast to int64, -1 -> INT64_MAX, at most the slices of a sliced
    input; execution condition: the body's execution_condition Result; current_iteration: Cast
    of iter_num; back edges: carried values; sliced inputs: Slice at start + iter_num * stride;
    concatenated outputs: scan outputs merged along their axis)."""
    b = ctx.b
    body = layer.bodies["body"]
    trip = inputs[0]
    if trip.is_const:
        n = int(np.asarray(trip.value()).reshape(-1)[0])
        m = b.const(INT64_MAX if n < 0 else n)
    else:
        t = b.Reshape(b.Cast(trip, to=7), b.const([], np.int64))
        m = b.Where(b.Less(t, b.const(0)), b.const(INT64_MAX), t)
    if any(e.axis is not None for e in body.inputs):  # no more iterations than slices
        m = b.Min(m, iteration_count(layer, inputs, body))
    cond = _scalar_bool(layer, b, inputs[1])

    def current_iteration(entry, param, iter_num, b):
        etype, shape = param.attrs["element_type"], param.attrs["shape"]
        v = iter_num if etype == I64 else b.Cast(iter_num, to=ctx.onnx_type(layer, etype))
        if shape != ():
            v = b.Reshape(v, b.const([1]))
        return Value(b, etype, shape, name=v)

    return loop(ctx, layer, inputs, body, m, cond, current_iteration)


@lowers("TensorIterator", "opset1")
def tensor_iterator(ctx, layer, inputs):
    """TensorIterator-1 -> Loop (iterations: (|end - start| + 1) / part_size of the first sliced
    input; sliced inputs: Slice at start + iter_num * stride; back edges: carried values;
    concatenated outputs: scan outputs merged along their axis)."""
    body = layer.bodies["body"]

    def no_special(entry, param, iter_num, b):
        raise UnsupportedLayer(layer, f"TensorIterator body Parameter '{param.name}' has a purpose")

    return loop(ctx, layer, inputs, body, iteration_count(layer, inputs, body), None, no_special)
