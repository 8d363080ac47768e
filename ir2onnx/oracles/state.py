"""Oracles of ReadValue-3/-6 and Assign-3/-6 for one inference after reset_state: ReadValue gives
its init value (zeros of variable_shape without one), Assign passes its value on. The interpreter
carries the state between steps (``evaluate(..., state=...)``); :func:`initial_state` is the
state a caller feeds the converted model on its first step."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from ..ir.graph import Graph
from .interpreter import input_name, parameters, run_graph
from .registry import oracle


def _read(layer, inputs):
    if inputs:
        return [np.asarray(inputs[0])]
    etype, shape = layer.attrs.get("variable_type"), layer.attrs.get("variable_shape")
    if etype is None or etype.numpy is None or shape is None:
        raise InvalidLayer(layer, "without an init input the variable needs variable_type and "
                                  "variable_shape")
    return [np.zeros(tuple(0 if d is None else d for d in shape), etype.numpy)]


@oracle("ReadValue", "opset3")
def read_value3(layer, inputs):
    return _read(layer, inputs)


@oracle("ReadValue", "opset6")
def read_value6(layer, inputs):
    return _read(layer, inputs)


@oracle("Assign", "opset3")
def assign3(layer, inputs):
    return [np.asarray(inputs[0])] * len(layer.outputs)


@oracle("Assign", "opset6")
def assign6(layer, inputs):
    return [np.asarray(inputs[0])] * len(layer.outputs)


def initial_state(graph: Graph, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What each variable holds on the first step after reset_state: its ReadValue's init value
    for these feeds. Only the layers the init values depend on are evaluated."""
    readers = [l for l in graph.order if l.type == "ReadValue"]
    needed, stack = set(), [s.layer for l in readers for s in l.sources] + [l.id for l in readers]
    while stack:
        lid = stack.pop()
        if lid not in needed:
            needed.add(lid)
            stack.extend(s.layer for s in graph.layers[lid].sources)
    sub = Graph(graph.name, graph.ir_version, {k: v for k, v in graph.layers.items() if k in needed},
                [l for l in graph.order if l.id in needed],
                [l for l in graph.parameters if l.id in needed], [], graph.xml_path, graph.bin_path, graph.precision)
    fed = {p.id: np.asarray(feeds[input_name(p)]) for p in parameters(sub)}
    reads: dict = {}
    run_graph(sub, fed, reads=reads)
    return reads
