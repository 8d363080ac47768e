"""Check the IR's declared ports against each other and against the lowered ONNX graph.

A lowering that returns a bare ONNX tensor name takes the element type and shape of its output
from the IR's declared port, and later lowerings build constant shapes from them. A hand-edited or
otherwise inconsistent IR (a port that disagrees with its producer or with what its layer computes)
would then convert into a model that fails onnx.checker far from the cause, or, worse, runs and
gives a differently shaped result. Both checks raise :class:`InvalidLayer` naming the layer.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from ..errors import InvalidLayer
from ..ir.element_types import from_onnx
from ..ir.graph import Graph, Shape, shape_str
from .builder import Builder, Value

SMALL_INITIALIZER = 4096  # elements: initializers up to this size carry their values (shape data)


def _agree(a: Shape, b: Shape) -> bool:
    """Same rank and equal dims wherever both are known (``None`` for an unknown rank agrees)."""
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def _declared(port) -> Shape:
    """A port's dims; a port without <dim>s is a scalar or of unknown rank: unknown here."""
    return port.shape if port.shape else None


def check_edges(graph: Graph) -> None:
    """Every input port must declare what its producer's output port declares (where both do)."""
    for layer in graph.order:
        for port, src in zip(layer.inputs, layer.sources):
            out = graph.layers[src.layer].outputs[src.output]
            problem = None
            if not _agree(_declared(port), _declared(out)):
                problem = f"dims {shape_str(port.shape)}"
            elif port.etype is not None and out.etype is not None and port.etype != out.etype:
                problem = f"element type {port.etype.name}"
            if problem:
                raise InvalidLayer(layer, f"input port {port.id} declares {problem}, but its producer "
                                          f"'{graph.layers[src.layer].name}' (output port {out.id}) "
                                          f"declares {shape_str(out.shape)} {out.etype.name if out.etype else '?'}")


def inferred_types(b: Builder, outputs: list, data_prop: bool = False) -> dict[str, onnx.TypeProto]:
    """ONNX shape inference over the lowered graph (weights as shape-only skeletons; with
    ``data_prop``, shape values propagated too): tensor name -> its TypeProto."""
    inits = []
    for t in b.tensors:
        proto = t.skeleton()
        if isinstance(t.data, np.ndarray) and t.data.size <= SMALL_INITIALIZER:
            proto.raw_data = bytes(t.raw_bytes())
        inits.append(proto)
    # graph outputs by name only: their declared types are what is being checked
    outs = [onnx.ValueInfoProto(name=o.name) for o in outputs]
    g = helper.make_graph(b.nodes, "declared", b.inputs, outs, initializer=inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", b.opset)])
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=data_prop)
    except Exception:  # inference problems are onnx.checker's to report
        return {}
    g = inferred.graph
    return {vi.name: vi.type for vi in list(g.value_info) + list(g.output) + list(g.input)}


def onnx_shape(tp: onnx.TypeProto) -> Shape:
    tt = tp.tensor_type
    if not tt.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim)


def check_outputs(graph: Graph, b: Builder, values: dict, outputs: list) -> None:
    """Each layer's output ports against what its lowering made: the Value's own shape, and the
    type and shape ONNX infers for its tensor. The first disagreement in topological order (the
    cause; later ones follow from it) raises InvalidLayer."""
    types = None
    for layer in graph.order:
        if layer.type in ("Parameter", "Result"):
            continue
        for i, port in enumerate(layer.outputs):
            v = values.get((layer.id, i))
            if not isinstance(v, Value):
                continue
            if v._name:  # the tensor is in the graph (a folded or unused one is not)
                if types is None:
                    types = inferred_types(b, outputs)
                tp = types.get(v._name)
                if tp is not None and tp.tensor_type.elem_type and v.etype.onnx is not None:
                    shape = onnx_shape(tp)
                    if tp.tensor_type.elem_type != v.etype.onnx or not _agree(shape, v.shape):
                        _fail(layer, port, f"{_type_name(tp.tensor_type.elem_type)} {shape_str(shape)}")
            if not _agree(_declared(port), v.shape):
                _fail(layer, port, f"{v.etype.name} {shape_str(v.shape)}")


def _type_name(onnx_type: int) -> str:
    try:
        return from_onnx(onnx_type).name
    except Exception:  # a type the IR has no name for
        return TensorProto.DataType.Name(onnx_type).lower()


def _fail(layer, port, gives: str) -> None:
    declared = f"{port.etype.name if port.etype else '?'} {shape_str(_declared(port))}"
    raise InvalidLayer(layer, f"output port {port.id} is declared {declared}, but the operation gives "
                              f"{gives} (the IR is inconsistent)")
