"""Parameter-1, Const-1 and Result-1: the layers every model has (Convert is in :mod:`.conversion`)."""
from __future__ import annotations

from ..errors import InvalidLayer, UnsupportedLayer
from ..ir.names import input_name
from ..lowering.builder import Value
from ..lowering.registry import lowers


@lowers("Parameter", "opset1")
def parameter(ctx, layer, inputs):
    """Parameter-1 -> a graph input named after the tensor, with its type and partial shape."""
    etype = layer.attrs["element_type"]
    ctx.onnx_type(layer, etype)
    name = input_name(layer)  # claimed by the converter before any layer (ir/names.py)
    shape = layer.attrs["shape"]
    if shape is None:
        raise UnsupportedLayer(layer, "an input of dynamic rank cannot be an ONNX graph input "
                                      "(onnx.checker requires a rank); give the Parameter a rank")
    ctx.b.inputs.append(ctx.b.value_info(name, etype, shape, dim_prefix=name))
    return [Value(ctx.b, etype, shape, name=name)]


@lowers("Const", "opset1")
def const(ctx, layer, inputs):
    """Const-1 -> an initializer, created only if some ONNX node uses it (its bytes stay in the
    .bin until the model is written)."""
    data = layer.const
    problem = None
    try:
        ctx.onnx_type(layer, data.etype)
    except UnsupportedLayer as e:
        problem = e
    return [Value(ctx.b, data.etype, data.shape, const=data.array, source=data,
                  hint=layer.name, unrepresentable=problem)]


@lowers("Result", "opset1")
def result(ctx, layer, inputs):
    """Result-1 -> Identity into a graph output named after the IR output tensor."""
    src_layer, index = ctx.graph.producer(layer, 0)
    port = src_layer.outputs[index]
    x = inputs[0]
    source = x.name  # first: a Const that ONNX cannot hold reports itself here
    etype = x.etype or port.etype
    if etype is None:  # (fuzz case 552: an exit 3 before)
        raise InvalidLayer(layer, f"the element type of its input is unknown: port {port.id} of layer "
                                  f"'{src_layer.name}' (id={src_layer.id}) has no precision "
                                  f"(or UNDEFINED) and nothing before it decides one")
    ctx.onnx_type(layer, etype)
    name = ctx.io_names[layer.id]  # claimed by the converter before any layer (ir/names.py)
    ctx.b.Identity(source, _names=[name])
    shape = port.shape if port.shape or x.shape == () else x.shape  # no <dim>s: scalar or unknown rank
    ctx.outputs[layer.id] = ctx.b.value_info(name, etype, shape)  # ordered by the converter
    return []
