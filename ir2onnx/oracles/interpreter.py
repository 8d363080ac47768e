"""Evaluate a whole IR graph with the per-op NumPy oracles.

The interpreter walks the layers in topological order, feeds each Parameter from ``feeds`` and
calls the oracle registered for every other layer's ``(type, version)``. It knows nothing of
ONNX or of the lowerings; the only thing it shares with the converter is the naming rule of the
model's inputs and outputs (:mod:`ir2onnx.ir.names`), so results can be matched by name::

    outputs = evaluate(graph, {"x": x})        # {output name: array}, in Result order
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import InvalidLayer, Ir2OnnxError, UnsupportedLayers
from ..ir.element_types import TYPES
from ..ir.graph import Graph, Layer, shape_str
from ..ir.idioms import extra_sources
from ..ir.names import input_name, output_names, parameters
from .registry import oracle_for

# Layers the interpreter evaluates itself (they need the feeds, not an oracle).
BUILTIN = frozenset({("Parameter", "opset1")})


def missing_oracles(graph: Graph) -> list[Layer]:
    """Layers with neither an oracle nor built-in evaluation (bodies included)."""
    missing = []
    for l in graph.order:
        if l.key not in BUILTIN and oracle_for(l.type, l.version) is None:
            missing.append(l)
        for body in l.bodies.values():
            missing += missing_oracles(body.graph)
    return missing


def _check_feed(layer: Layer, value: np.ndarray, name: str) -> np.ndarray:
    etype = layer.attrs["element_type"]
    value = np.asarray(value)
    if etype.numpy is not None and value.dtype != etype.numpy:
        raise Ir2OnnxError(f"input '{name}' must be {etype.name} ({etype.numpy}), got {value.dtype}")
    shape = layer.attrs["shape"]
    if shape is not None and (len(shape) != value.ndim or
                              any(d is not None and d != s for d, s in zip(shape, value.shape))):
        raise Ir2OnnxError(f"input '{name}' has shape {list(value.shape)}, the model declares "
                           f"{shape_str(shape)}")
    return value


def widened_decompression(graph: Graph) -> set[str]:
    """Ids of the layers that OpenVINO's CPU plugin computes in f32 although the IR says f16: a
    weight-decompression chain Const(integer, f8, nf4 or f4e2m1) -> Convert(f16) -> [Subtract] ->
    Multiply(f16 scale: a Const, or Convert of constants, MXFP/NVFP4) -> [Reshape] read through a
    Convert(f32) (measured, 2026.4: the plugin decompresses such weights in f32 without rounding
    them, nf4's table values included, to f16; docs/deviations.md). So is NNCF's CB4 chain,
    whose weight is a Gather of an f16 codebook at the indices Convert(Const u4) (measured, 2026.4:
    OpenVINO matches the f32 product within 6e-6, the f16 one only within 3e-2)."""
    consumers = graph.consumers()

    def single(layer: Layer) -> bool:
        return len(consumers.get((layer.id, 0), [])) == 1

    def int_convert(layer: Layer) -> bool:
        src = graph.producer(layer, 0)[0] if layer.type == "Convert" else None
        return src is not None and src.type == "Const" and (
            src.const.etype.is_integer or src.const.etype.name in ("f8e4m3", "f8e5m2", "nf4", "f4e2m1"))

    def codebook(layer: Layer) -> bool:  # Gather(codebook, Convert(Const u4), axis)
        if layer.type != "Gather" or len(layer.sources) < 2:
            return False
        idx = graph.producer(layer, 1)[0]
        src = graph.producer(idx, 0)[0] if idx.type == "Convert" else None
        return src is not None and src.type == "Const" and src.const.etype.name == "u4"

    widened: set[str] = set()
    for layer in graph.order:
        if layer.type != "Convert" or layer.attrs["destination_type"].name != "f32":
            continue
        chain, node = [], graph.producer(layer, 0)[0]
        if node.type == "Reshape" and single(node):
            chain.append(node)
            node = graph.producer(node, 0)[0]
        if node.type != "Multiply" or not single(node) or node.outputs[0].etype is None \
                or node.outputs[0].etype.name != "f16":
            continue
        chain.append(node)
        a, b = (graph.producer(node, i)[0] for i in (0, 1))  # which one is the weight's Convert
        if any(codebook(x) and single(x) for x in (a, b)):
            widened.update(l.id for l in chain)
            continue
        weight = a if a.type == "Subtract" or int_convert(a) else b
        if weight.type == "Subtract" and single(weight):
            chain.append(weight)
            weight = graph.producer(weight, 0)[0]
        if weight.type == "Convert" and single(weight) and int_convert(weight) \
                and weight.attrs["destination_type"].name == "f16":
            widened.update(l.id for l in chain + [weight])
    return widened


def _widen(layer: Layer, inputs: list) -> tuple[Layer, list]:
    """A widened layer evaluated in f32: f16 inputs read as f32, Convert(f16) made Convert(f32)."""
    inputs = [np.asarray(v).astype(np.float32) if np.asarray(v).dtype == np.float16 else v for v in inputs]
    if layer.type == "Convert":
        layer = dataclasses.replace(layer, attrs={**layer.attrs, "destination_type": TYPES["f32"]})
    return layer, inputs


def evaluate(graph: Graph, feeds: dict[str, np.ndarray], state: dict | None = None) -> dict[str, np.ndarray]:
    """Run ``graph`` on ``feeds`` (keyed by input name) with the oracles.

    Returns ``{output name: array}`` (look outputs up by name). Raises
    :class:`~ir2onnx.errors.UnsupportedLayers` listing every layer without an oracle, and
    :class:`~ir2onnx.errors.InvalidLayer` when an oracle finds the layer or its inputs invalid.
    ``state`` (a stateful model): ``{variable_id: value}`` that ReadValue reads (a variable absent
    from it reads its init value, as after OpenVINO's reset_state); Assign's values replace its
    entries when the run ends, so the same dict drives the next step.
    """
    missing = missing_oracles(graph)
    if missing:
        raise UnsupportedLayers([(l, "no oracle for this operation version") for l in missing])
    names = {input_name(p): p for p in parameters(graph)}
    unknown = sorted(set(feeds) - set(names))
    if unknown:
        raise Ir2OnnxError(f"the model has no input {', '.join(map(repr, unknown))} "
                           f"(inputs: {', '.join(names)})")
    absent = [n for n in names if n not in feeds]
    if absent:
        raise Ir2OnnxError(f"no value for input(s) {', '.join(map(repr, absent))}")
    out_names = output_names(graph)
    fed = {p.id: _check_feed(p, feeds[input_name(p)], input_name(p)) for p in parameters(graph)}
    new_state: dict = {}
    outputs = {out_names[rid]: v for rid, v in run_graph(graph, fed, state, new_state).items()}
    if state is not None:
        state.update(new_state)
    return outputs


def run_graph(graph: Graph, fed: dict[str, np.ndarray], state: dict | None = None,
              new_state: dict | None = None, reads: dict | None = None) -> dict[str, np.ndarray]:
    """Run ``graph`` (the model or a body) with its Parameters' values given by layer id; returns
    the value of every Result by layer id (a body's oracles call this for each iteration).
    A ReadValue reads ``state`` where it holds the variable (``reads`` records what each read),
    an Assign writes ``new_state``."""
    uses: dict[tuple[str, int], int] = {}
    sources = {l.id: (*l.sources, *extra_sources(graph, l)) for l in graph.order}
    for layer in graph.order:
        for s in sources[layer.id]:
            uses[(s.layer, s.output)] = uses.get((s.layer, s.output), 0) + 1
    values: dict[tuple[str, int], np.ndarray] = {}
    outputs: dict[str, np.ndarray] = {}
    widened = widened_decompression(graph)
    for layer in graph.order:
        inputs = [values[(s.layer, s.output)] for s in sources[layer.id]]
        for s in sources[layer.id]:  # free intermediates as soon as their last user has them
            uses[(s.layer, s.output)] -= 1
            if uses[(s.layer, s.output)] == 0:
                del values[(s.layer, s.output)]
        if layer.key in BUILTIN:
            outs = [np.asarray(fed[layer.id])]
        elif layer.type == "ReadValue" and state is not None and layer.attrs["variable_id"] in state:
            outs = [np.asarray(state[layer.attrs["variable_id"]])]
        else:
            lay, ins = _widen(layer, inputs) if layer.id in widened else (layer, inputs)
            outs = oracle_for(layer.type, layer.version)(lay, ins)
            if layer.type == "Assign" and new_state is not None:
                new_state[layer.attrs["variable_id"]] = np.asarray(inputs[0])
            if layer.type == "Result":
                outputs[layer.id] = np.asarray(outs[0])
                continue
        if layer.type == "ReadValue" and reads is not None:
            reads[layer.attrs["variable_id"]] = np.asarray(outs[0])
        if len(outs) != len(layer.outputs):
            raise InvalidLayer(layer, f"the oracle returned {len(outs)} output(s) for "
                                      f"{len(layer.outputs)} output port(s)")
        for i, value in enumerate(outs):
            if uses.get((layer.id, i)):
                values[(layer.id, i)] = np.asarray(value)
    return outputs
