"""``--rename OLD=NEW`` (``rename={OLD: NEW}`` in the API): new names for a converted model's
inputs and outputs, applied to the ONNX graph before it is written.

A name is replaced everywhere it is used: the graph's inputs and outputs, every node's inputs and
outputs, value_info, and the bodies of Loop/If/Scan nodes (which may read outer names). An unknown
name, an empty one, a new name that is already taken in the graph (any tensor, initializer or
body name) or two names renamed alike is refused (:class:`~ir2onnx.errors.Ir2OnnxError`).
"""
from __future__ import annotations

import onnx

from .errors import Ir2OnnxError


def parse_renames(items: list[str]) -> dict[str, str]:
    """``['a=b', 'c=d']`` -> ``{'a': 'b', 'c': 'd'}``."""
    out: dict[str, str] = {}
    for item in items:
        old, sep, new = item.partition("=")
        if not sep or not old or not new:
            raise Ir2OnnxError(f"--rename '{item}': expected OLD=NEW with both names non-empty")
        if old in out:
            raise Ir2OnnxError(f"--rename: '{old}' is renamed twice")
        out[old] = new
    return out


def _graphs(graph: onnx.GraphProto):
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            for sub in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                yield from _graphs(sub)


def _names(graph: onnx.GraphProto, initializers) -> set[str]:
    names = set(initializers)
    for g in _graphs(graph):
        names.update(v.name for v in (*g.input, *g.output, *g.value_info))
        names.update(t.name for t in g.initializer)
        for node in g.node:
            names.update(node.input)
            names.update(node.output)
    names.discard("")
    return names


def rename_io(model: onnx.ModelProto, renames: dict[str, str], initializers=()) -> None:
    """Rename inputs and outputs of ``model`` in place. ``initializers``: names of initializers
    held outside the proto (the converter's tensor list), which a new name may not take."""
    if not renames:
        return
    graph = model.graph
    io = [v.name for v in graph.input] + [v.name for v in graph.output]
    for old, new in renames.items():
        if old not in io:
            raise Ir2OnnxError(f"rename {old}={new}: the model has no input or output '{old}' (inputs: "
                               f"{', '.join(v.name for v in graph.input) or 'none'}; outputs: "
                               f"{', '.join(v.name for v in graph.output)})")
        if not new or not new.strip():
            raise Ir2OnnxError(f"rename {old}={new!r}: the new name is empty")
    targets = list(renames.values())
    twice = sorted({n for n in targets if targets.count(n) > 1})
    if twice:
        raise Ir2OnnxError(f"rename: two names would both become '{twice[0]}'")
    taken = _names(graph, initializers) - set(renames)
    for old, new in renames.items():
        if new in taken:
            raise Ir2OnnxError(f"rename {old}={new}: '{new}' is already a name in the model")
    for g in _graphs(graph):
        for v in (*g.input, *g.output, *g.value_info):
            v.name = renames.get(v.name, v.name)
        for node in g.node:
            for field in (node.input, node.output):
                for i, name in enumerate(field):
                    if name in renames:
                        field[i] = renames[name]
