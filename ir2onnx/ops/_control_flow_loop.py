"""The ONNX Loop both Loop-5 and TensorIterator-1 lower to (used by :mod:`.control_flow` only).

ONNX Loop body: inputs ``(iter_num, cond_in, carried...)``, outputs ``(cond_out, carried...,
scan...)``. Here a back edge (body Result -> body Parameter) is a carried value whose initial value
is the Parameter's port-map input; every output port reads either a carried value's final value
(last iteration, the Result is a back-edge source) or a scan output: concatenated along its axis,
or the last slice of it (last iteration of a Result that feeds no back edge).
"""
from __future__ import annotations

import numpy as np
from onnx import helper

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.element_types import element_type
from ..lowering.builder import Value

I64 = element_type("i64")
BOOL = element_type("boolean")


def _axis(layer, axis: int, rank: int | None) -> int:
    if rank is None:
        raise UnsupportedLayer(layer, "a sliced or concatenated tensor needs a known rank")
    if not -rank <= axis < rank:
        raise UnsupportedLayer(layer, f"port map axis {axis} is out of range for rank {rank}")
    return axis % rank


def _dim(b, x: Value, axis: int) -> str:
    """Dimension ``axis`` of ``x`` as a 1-element int64 tensor (a constant when known)."""
    if x.shape is not None and x.shape[axis] is not None:
        return b.const([x.shape[axis]])
    return b.Slice(b.Shape(x), b.const([axis]), b.const([axis + 1]))


def _positive(b, value: int, dim: str) -> str:
    """``value`` counted from the end when negative (OpenVINO's make_positive: value + dim)."""
    return b.const([value]) if value >= 0 else b.Add(dim, b.const([value]))


def slicing_plan(layer, entry, x: Value):
    """For a sliced input: (axis, first offset as an outer 1-element tensor, iteration count as
    an outer 1-element tensor). Iterations cover [start, end] inclusive (after counting negative
    ends from the back), ``part_size`` elements each, stepping by ``stride``."""
    b = x._b
    a = _axis(layer, entry.axis, x.rank)
    if abs(entry.stride) != entry.part_size or (entry.stride < 0 and entry.part_size != 1):
        raise UnsupportedLayer(layer, f"sliced input with stride {entry.stride} and part_size "
                                      f"{entry.part_size} (supported: stride = part_size, or "
                                      f"stride -1 with part_size 1)")
    dim = _dim(b, x, a)
    start, end = _positive(b, entry.start, dim), _positive(b, entry.end, dim)
    count = b.Div(b.Add(b.Abs(b.Sub(end, start)), b.const([1])), b.const([entry.part_size]))
    return a, start, count


def slice_at(b, x: Value, plan, entry, iter1: str, etype, shape) -> Value:
    """Inside the body: the part of outer ``x`` that iteration ``iter1`` (shape [1]) sees."""
    a, start, _ = plan
    off = b.Add(start, b.Mul(iter1, b.const([entry.stride])))
    return Value(b, etype, shape, name=b.Slice(x, off, b.Add(off, b.const([entry.part_size])),
                                               b.const([a])))


def concatenated(layer, b, stacked: str, entry, rank: int | None) -> str:
    """Scan output ``stacked`` ([N, ...part...]) -> every iteration's part joined along the axis
    (iteration order reversed for a negative stride)."""
    a = _axis(layer, entry.axis, rank)
    whole = (0, -1) if entry.stride > 0 else (-1, 0)
    if (entry.start, entry.end) != whole:
        raise UnsupportedLayer(layer, f"concatenated output with start {entry.start} and end "
                                      f"{entry.end} (supported: every iteration, {whole[0]}..{whole[1]})")
    if entry.stride < 0:
        stacked = b.Slice(stacked, b.const([-1]), b.const([np.iinfo(np.int64).min]), b.const([0]),
                          b.const([-1]))
    perm = list(range(1, a + 1)) + [0] + list(range(a + 1, rank + 1))
    t = b.Transpose(stacked, perm=perm)
    s = b.Shape(t)
    merged = b.Mul(b.Slice(s, b.const([a]), b.const([a + 1])), b.Slice(s, b.const([a + 1]), b.const([a + 2])))
    parts = [b.Slice(s, b.const([0]), b.const([a]))] if a else []
    parts += [merged, b.Slice(s, b.const([a + 2]), b.const([rank + 1]))]
    return b.Reshape(t, b.Concat(*parts, axis=0))


def loop(ctx, layer, inputs, body, trip: str | None, cond: str | None, seed_special) -> list:
    """Emit the ONNX Loop. ``trip``/``cond``: outer int64 / bool scalars (None: omitted);
    ``seed_special(entry, iter_num, cond_in, b)`` gives the body Value of a Parameter that is
    neither carried, sliced nor invariant (Loop's current_iteration), or None."""
    b = ctx.b
    g = body.graph
    carried = list(body.back_edges)  # (result id, parameter id)
    init = {e.internal_layer_id: inputs[e.port] for e in body.inputs if e.port >= 0}
    for _, pid in carried:
        if pid not in init:
            raise UnsupportedLayer(layer, f"back edge target '{g.layers[pid].name}' has no initial value")
    sliced = {e.internal_layer_id: (e, slicing_plan(layer, e, inputs[e.port]))
              for e in body.inputs if e.axis is not None}
    for v in inputs:
        if not v.is_const:
            v.name
    iter_name, cond_in = b.unique(f"{layer.name}/iter"), b.unique(f"{layer.name}/cond_in")
    carried_names = {pid: b.unique(f"{layer.name}/{g.layers[pid].name}") for _, pid in carried}
    from_carry = {rid for rid, _ in carried}
    scans = [e for e in body.outputs if e.port >= 0 and (e.axis is not None or e.internal_layer_id not in from_carry)]
    exec_cond = next((e.internal_layer_id for e in body.outputs if e.purpose == "execution_condition"), None)

    def prelude():
        seeds = {}
        iter1 = b.Reshape(iter_name, b.const([1])) if sliced else None
        for e in body.inputs:
            p = g.layers[e.internal_layer_id]
            etype, shape = p.attrs["element_type"], p.attrs["shape"]
            if e.internal_layer_id in carried_names:
                seeds[p.id] = Value(b, etype, shape, name=carried_names[p.id])
            elif e.internal_layer_id in sliced:
                entry, plan = sliced[p.id]
                seeds[p.id] = slice_at(b, inputs[e.port], plan, entry, iter1, etype, shape)
            elif e.port >= 0:
                seeds[p.id] = inputs[e.port]
            else:
                seeds[p.id] = seed_special(e, p, iter_name, b)
        return seeds

    def cond_out(result_value):
        if exec_cond is None:
            return Value(b, BOOL, (), name=b.Identity(cond_in))
        v = result_value(exec_cond)
        if v.etype != BOOL or (v.shape is not None and any(d not in (1, None) for d in v.shape)):
            raise InvalidLayer(layer, f"the execution condition must be one boolean, the body gives "
                                      f"{v.etype.name} {list(v.shape) if v.shape is not None else '[...]'}")
        return Value(b, BOOL, (), name=v.name if v.shape == () else b.Reshape(v, b.const([], np.int64)))

    outs = [cond_out] + [rid for rid, _ in carried] + [e.internal_layer_id for e in scans]
    nodes, infos, values = ctx.body(g, prelude, outs)
    body_inputs = [b.value_info(iter_name, I64, ()), b.value_info(cond_in, BOOL, ())]
    for rid, pid in carried:
        p = g.layers[pid]
        body_inputs.append(b.value_info(carried_names[pid], p.attrs["element_type"], p.attrs["shape"]))
    for info, (_, pid) in zip(infos[1:], carried):  # a carried value may change shape per iteration
        p = g.layers[pid]
        info.CopyFrom(b.value_info(info.name, p.attrs["element_type"], p.attrs["shape"]))
    for info, v in zip(infos[1 + len(carried):], values[1 + len(carried):]):  # scans: rank only
        info.CopyFrom(b.value_info(info.name, v.etype, None if v.shape is None else (None,) * len(v.shape)))
    graph = helper.make_graph(nodes, b.unique(f"{layer.name}/body"), body_inputs, infos)
    n_out = len(carried) + len(scans)
    names = [b.unique(f"{layer.name}/out") for _ in range(n_out)]
    b.op("Loop", trip or "", cond or "", *[init[pid] for _, pid in carried], _outputs=n_out,
         _names=names, body=graph)
    final = {rid: names[i] for i, (rid, _) in enumerate(carried)}
    stacked = {id(e): names[len(carried) + i] for i, e in enumerate(scans)}
    by_result = {rid: v for rid, v in zip(outs[1:], values[1:])}
    results = []
    for k, port in enumerate(layer.outputs):
        e = next(e for e in body.outputs if e.port == k)
        v = by_result[e.internal_layer_id]
        if e.axis is not None:
            results.append(concatenated(layer, b, stacked[id(e)], e, v.rank))
        elif e.internal_layer_id in final:
            results.append(final[e.internal_layer_id])
        else:
            results.append(b.Gather(stacked[id(e)], b.const(-1), axis=0))
    return results


def iteration_count(layer, inputs, body) -> str:
    """The iteration count of the first sliced input, as an int64 scalar (TensorIterator's
    iteration count; a bound on Loop's)."""
    entries = [e for e in body.inputs if e.axis is not None]
    if not entries:
        raise UnsupportedLayer(layer, "a TensorIterator without a sliced input (its iteration count "
                                      "comes from no tensor)")
    e = entries[0]
    _, _, count = slicing_plan(layer, e, inputs[e.port])
    return inputs[0]._b.Reshape(count, inputs[0]._b.const([], np.int64))
