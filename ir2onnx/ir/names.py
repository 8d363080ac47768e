"""The names a converted model's inputs and outputs get, the one rule every backend follows.

An input is named after the Parameter's output tensor (its first name, else the layer name); an
output after the tensor its Result reads. A name already taken (the tensor is also an input, or
feeds an earlier Result) falls back to the Result layer's name, made safe and unique with ``_1``,
``_2`` ... by :func:`fresh` — the same rule that names the converter's inner tensors, so the
outputs of onnxruntime, the oracles and OpenVINO match by name::

    output_names(graph)    # {Result layer id: output name}, in the converted model's order
"""
from __future__ import annotations

import re

from .graph import Graph, Layer, Port

_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/\-]")


def fresh(hint: str, taken: set[str]) -> str:
    """``hint`` with every character outside ``[A-Za-z0-9_.:/-]`` made ``_``, then ``_1``, ``_2``
    ... until it is not in ``taken``; the name is added to ``taken``."""
    base = _UNSAFE.sub("_", hint) or "t"
    name, i = base, 1
    while name in taken:
        name = f"{base}_{i}"
        i += 1
    taken.add(name)
    return name


def tensor_name(layer: Layer, port: Port) -> str:
    """The user-facing name of an output port: its first tensor name, else the layer name."""
    return port.names[0] if port.names else layer.name


def input_name(layer: Layer) -> str:
    """A Parameter's user-facing name: its output tensor's first name, else the layer name."""
    return tensor_name(layer, layer.outputs[0])


def parameters(graph: Graph) -> list[Layer]:
    """The Parameters in the order the converted model lists its inputs (topological)."""
    return [layer for layer in graph.order if layer.key == ("Parameter", "opset1")]


def results(graph: Graph) -> list[Layer]:
    """The Results in the order the converted model lists its outputs (the IR's file order)."""
    return list(graph.results)


def output_names(graph: Graph) -> dict[str, str]:
    """Result layer id -> user-facing output name (see the module's docstring)."""
    taken = {input_name(p) for p in parameters(graph)}
    out = {}
    for result in results(graph):
        src, index = graph.producer(result, 0)
        port = src.outputs[index]
        name = tensor_name(src, port) if port.names else result.name
        if name in taken:
            name = fresh(result.name, taken)
        taken.add(name)
        out[result.id] = name
    return out


def variables(graph: Graph) -> list[str]:
    """The variable ids of a stateful model (ReadValue/Assign), in the order its ReadValues come:
    the names of its state, as every backend feeds and returns it."""
    out = []
    for layer in graph.order:
        if layer.type == "ReadValue" and layer.attrs["variable_id"] not in out:
            out.append(layer.attrs["variable_id"])
    return out


def output_name(graph: Graph, result: Layer) -> str:
    """The user-facing name of one Result (see :func:`output_names`)."""
    return output_names(graph)[result.id]
