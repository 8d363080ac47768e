"""Fix input dims at conversion (``convert --shape NAME=DIMS``) and let them reach every layer.

OpenVINO writes each port's partial shape into the IR, computed from the Parameters' shapes; a
model converted with dynamic dims keeps them on every port downstream. When the user fixes the
inputs' dims, :func:`fix_inputs` replaces the Parameters' shapes (each checked against the
declared rank and static dims), and :func:`refine` re-infers the ports' dims: ONNX shape
inference (with data propagation, so Shape -> Gather -> Concat -> Reshape chains carry values)
over the lowered graph gives every IR output port a shape, and a dim the IR left dynamic takes
the inferred value. The converter lowers again with the refined ports until nothing changes, so
that ShapeOf and the shape arithmetic downstream fold to constants (:mod:`.shape_vectors`) and
the lowerings that choose a static form take it. Bodies of If/Loop/TensorIterator keep their
declared ports. A refined port is then checked like a declared one (:mod:`.declared`).
"""
from __future__ import annotations

import dataclasses

from ..errors import Ir2OnnxError
from ..ir.graph import Graph, Layer, Shape, shape_str
from .builder import Builder, Value
from .declared import inferred_types, onnx_shape

MAX_PASSES = 6  # lowerings with refined ports before the shapes are taken as they are


def _input_names(layer: Layer) -> tuple[str, ...]:
    """The names a Parameter answers to: its tensor names (the first is the ONNX input's), its
    layer name."""
    return (*layer.outputs[0].names, layer.name)


def fix_inputs(graph: Graph, shapes: dict[str, tuple[int, ...]]) -> Graph:
    """``graph`` with the named Parameters' dims fixed to ``shapes`` (a name is a tensor name or
    the Parameter's layer name). Raises Ir2OnnxError for an unknown name, a rank that differs from
    the declared one, or a dim that contradicts a static declared dim."""
    if not shapes:
        return graph
    by_name: dict[str, Layer] = {}
    for p in graph.parameters:
        for n in _input_names(p):
            by_name.setdefault(n, p)
    fixed: dict[str, tuple[int, ...]] = {}
    for name, dims in shapes.items():
        p = by_name.get(name)
        if p is None:
            known = ", ".join(_input_names(q)[0] for q in graph.parameters)
            raise Ir2OnnxError(f"--shape {name}: the model has no input '{name}' (inputs: {known})")
        dims = tuple(int(d) for d in dims)
        declared = p.attrs.get("shape")
        if declared is not None:
            if len(declared) != len(dims):
                raise Ir2OnnxError(f"--shape {name}={','.join(map(str, dims))}: the input has rank "
                                   f"{len(declared)} ({shape_str(declared)}), not {len(dims)}")
            for i, (d, g) in enumerate(zip(declared, dims)):
                if d is not None and d != g:
                    raise Ir2OnnxError(f"--shape {name}={','.join(map(str, dims))}: dim {i} of the "
                                       f"input is {d} ({shape_str(declared)}), not {g}")
        if p.id in fixed and fixed[p.id] != dims:
            raise Ir2OnnxError(f"--shape {name}: the input is given two different shapes")
        fixed[p.id] = dims
    return with_shapes(graph, {(pid, 0): dims for pid, dims in fixed.items()})


def with_shapes(graph: Graph, ports: dict[tuple[str, int], tuple]) -> Graph:
    """A copy of ``graph`` whose output ports ``(layer id, index)`` have the given shapes, and the
    input ports they feed too; a Parameter's ``shape`` attribute follows its port. Layers, attrs
    and constants are shared with ``graph`` (nothing is read from the .bin)."""
    layers: dict[str, Layer] = {}
    for layer in graph.order:
        outputs = [dataclasses.replace(port, shape=ports[(layer.id, i)]) if (layer.id, i) in ports else port
                   for i, port in enumerate(layer.outputs)]
        inputs = [dataclasses.replace(port, shape=ports[(s.layer, s.output)])
                  if (s.layer, s.output) in ports and port.shape is not None else port
                  for port, s in zip(layer.inputs, layer.sources)]
        inputs += layer.inputs[len(layer.sources):]
        attrs = layer.attrs
        if layer.type == "Parameter" and (layer.id, 0) in ports:
            attrs = {**attrs, "shape": ports[(layer.id, 0)]}
        layers[layer.id] = dataclasses.replace(layer, inputs=inputs, outputs=outputs, attrs=attrs)
    return dataclasses.replace(
        graph, layers=layers, order=[layers[l.id] for l in graph.order],
        parameters=[layers[l.id] for l in graph.parameters], results=[layers[l.id] for l in graph.results])


def _inferred_shapes(b: Builder, outputs: list) -> dict[str, Shape]:
    """ONNX shape inference with data propagation over the lowered graph: tensor name -> dims
    (``None`` for a dim it cannot tell)."""
    shapes = {}
    for name, tp in inferred_types(b, outputs, data_prop=True).items():
        shape = onnx_shape(tp)
        if shape is not None:
            shapes[name] = shape
    return shapes


def refine(graph: Graph, b: Builder, values: dict, outputs: list) -> Graph | None:
    """``graph`` with the dynamic dims of its output ports that ONNX inference over the lowered
    graph (``b``, ``values``: (layer id, index) -> Value) knows, or None when it knows no more."""
    inferred = None
    ports: dict[tuple[str, int], tuple] = {}
    for layer in graph.order:
        if layer.type in ("Parameter", "Result", "Const"):
            continue
        for i, port in enumerate(layer.outputs):
            if not port.shape or all(d is not None for d in port.shape):
                continue
            v = values.get((layer.id, i))
            if not isinstance(v, Value):
                continue
            known = v.shape
            if v._name and (known is None or None in known):
                if inferred is None:
                    inferred = _inferred_shapes(b, outputs)
                known = inferred.get(v._name, known)
            if known is None or len(known) != len(port.shape):
                continue
            new = tuple(d if d is not None else k for d, k in zip(port.shape, known))
            if new != port.shape:
                ports[(layer.id, i)] = new
    return with_shapes(graph, ports) if ports else None
