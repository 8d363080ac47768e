"""Oracles of If-8, Loop-5 and TensorIterator-1, from the spec: the body is run once per
iteration by the interpreter, sliced inputs are cut and outputs concatenated by index arithmetic."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .interpreter import run_graph
from .registry import oracle


@oracle("If", "opset8")
def if_op(layer, inputs):
    cond = np.asarray(inputs[0]).reshape(-1)
    if cond.size != 1:
        raise InvalidLayer(layer, f"the condition must hold one element, got {cond.size}")
    body = layer.bodies["then_body" if bool(cond[0]) else "else_body"]
    out = run_graph(body.graph, {e.internal_layer_id: inputs[e.port] for e in body.inputs})
    return [out[next(e.internal_layer_id for e in body.outputs if e.port == k)]
            for k in range(len(layer.outputs))]


def _positive(value: int, dim: int) -> int:
    return value + dim if value < 0 else value


def _slices(entry, x: np.ndarray) -> list[np.ndarray]:
    """Every part of ``x`` a sliced input hands the body, in iteration order: [start, end]
    inclusive (negative ends counted from the back), ``part_size`` elements from
    ``start + i * stride`` (for a negative stride the part ends there)."""
    axis = entry.axis % x.ndim
    dim = x.shape[axis]
    start, end = _positive(entry.start, dim), _positive(entry.end, dim)
    count = (abs(end - start) + 1) // entry.part_size
    parts = []
    for i in range(count):
        first = start + i * entry.stride
        if entry.stride < 0:
            first = first - entry.part_size + 1
        index = [slice(None)] * x.ndim
        index[axis] = slice(first, first + entry.part_size)
        parts.append(x[tuple(index)])
    return parts


def _run(layer, inputs, body, trip: int | None, cond: bool):
    """Iterate the body; returns the per-iteration Result values and the final carried values."""
    params = {p.id: p for p in body.graph.parameters}
    sliced = {e.internal_layer_id: _slices(e, np.asarray(inputs[e.port]))
              for e in body.inputs if e.axis is not None}
    if sliced:  # a TensorIterator runs once per slice; a Loop at most that often
        count = min(len(s) for s in sliced.values())
        trip = count if trip is None or trip < 0 else min(trip, count)
    elif trip is None:
        trip = 0
    state = {e.internal_layer_id: np.asarray(inputs[e.port]) for e in body.inputs
             if e.port >= 0 and e.axis is None}
    exec_cond = next((e.internal_layer_id for e in body.outputs if e.purpose == "execution_condition"), None)
    history = []
    i = 0
    while (trip < 0 or i < trip) and cond:
        fed = dict(state)
        for e in body.inputs:
            pid = e.internal_layer_id
            if pid in sliced:
                fed[pid] = sliced[pid][i]
            elif e.purpose == "current_iteration":
                p = params[pid]
                fed[pid] = np.full(p.attrs["shape"] or (), i, p.attrs["element_type"].numpy)
        out = run_graph(body.graph, fed)
        history.append(out)
        for rid, pid in body.back_edges:
            state[pid] = out[rid]
        if exec_cond is not None:
            cond = bool(np.asarray(out[exec_cond]).reshape(-1)[0])
        i += 1
    return history, state


def _outputs(layer, body, history, state):
    back = dict(body.back_edges)
    results = []
    for k in range(len(layer.outputs)):
        e = next(e for e in body.outputs if e.port == k)
        rid = e.internal_layer_id
        if e.axis is not None:
            parts = [h[rid] for h in history]
            if e.stride < 0:
                parts = parts[::-1]
            if not parts:  # zero iterations: empty along the axis, the output port's other dims
                shape = layer.outputs[k].shape
                axis = e.axis % len(shape) if shape else 0
                if not shape or any(d is None for i, d in enumerate(shape) if i != axis):
                    raise InvalidLayer(layer, "a concatenated output of zero iterations whose "
                                              "other dims are not declared")
                etype = layer.outputs[k].etype
                results.append(np.zeros(tuple(0 if i == axis else d for i, d in enumerate(shape)),
                                        etype.numpy if etype else np.float32))
                continue
            results.append(np.concatenate(parts, axis=e.axis % parts[0].ndim))
        elif history:
            results.append(history[-1][rid])
        elif rid in back:
            results.append(state[back[rid]])
        else:
            raise InvalidLayer(layer, "the last-iteration value of zero iterations")
    return results


@oracle("Loop", "opset5")
def loop(layer, inputs):
    body = layer.bodies["body"]
    trip = int(np.asarray(inputs[0]).reshape(-1)[0])
    cond = bool(np.asarray(inputs[1]).reshape(-1)[0])
    history, state = _run(layer, inputs, body, trip, cond)
    return _outputs(layer, body, history, state)


@oracle("TensorIterator", "opset1")
def tensor_iterator(layer, inputs):
    body = layer.bodies["body"]
    history, state = _run(layer, inputs, body, None, True)
    return _outputs(layer, body, history, state)
