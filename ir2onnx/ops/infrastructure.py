"""Parameter-1, Const-1, Result-1 and Convert-1: the layers every model has."""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedLayer
from ..lowering.builder import LazyValue, Value
from ..lowering.registry import lowers
from ..oracles.infrastructure import convert_array

# A Convert of a constant at most this many elements is folded at convert time; bigger ones
# (OpenVINO's compressed f16 weights) keep the narrow initializer and a Cast, see README.
FOLD_CONVERT_ELEMENTS = 4096


def port_name(layer, port) -> str:
    """The user-facing tensor name of an output port: its first name, else the layer name."""
    return port.names[0] if port.names else layer.name


@lowers("Parameter", "opset1")
def parameter(ctx, layer, inputs):
    """Parameter-1 -> a graph input named after the tensor, with its type and partial shape."""
    etype = layer.attrs["element_type"]
    ctx.onnx_type(layer, etype)
    port = layer.outputs[0]
    name = ctx.b.reserve(port_name(layer, port))
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
    ctx.onnx_type(layer, etype)
    name = port_name(src_layer, port) if port.names else layer.name
    # a tensor that is also a graph input (Parameter -> Result) or feeds two Results keeps its
    # name once; the other output is named after its Result layer
    name = ctx.b.reserve(name) if ctx.b.is_free(name) else ctx.b.unique(layer.name)
    ctx.b.Identity(source, _names=[name])
    shape = port.shape if port.shape or x.shape == () else x.shape  # no <dim>s: scalar or unknown rank
    ctx.outputs[layer.id] = ctx.b.value_info(name, etype, shape)  # ordered by the converter
    return []


@lowers("Convert", "opset1")
def convert(ctx, layer, inputs):
    """Convert-1 -> Cast (folded for small constants and for source types ONNX lacks).

    OpenVINO's FP16 weight compression (f16 Const -> Convert f32) keeps the f16 initializer and a
    Cast: the file stays half size and the weights are never held twice while converting.
    """
    x = inputs[0]
    dst = layer.attrs["destination_type"]
    if dst.numpy is None or dst.onnx is None:
        raise UnsupportedLayer(layer, f"conversion to {dst.name} has no ONNX counterpart")
    if x.etype == dst:
        return [x]
    src_ok = x.etype.onnx is not None and x.etype.min_opset <= ctx.opset
    if x.is_const and (not src_ok or np.prod(x.shape, dtype=np.int64) <= FOLD_CONVERT_ELEMENTS):
        ctx.onnx_type(layer, dst)
        return [Value(ctx.b, dst, x.shape, const=lambda: convert_array(x.value(), dst.numpy), hint=layer.name)]
    ctx.onnx_type(layer, x.etype)
    # a Value, not a bare name: OpenVINO sometimes writes the source precision on the output port
    # of a decompression Convert; destination_type is the truth
    to = ctx.onnx_type(layer, dst)
    if x.is_const:  # lazy: a consumer that reads the Const itself (RNN weights reordered at
        # convert time) leaves no dead Cast and no second copy of the weights in the file
        return [LazyValue(ctx.b, dst, x.shape, lambda: ctx.b.Cast(x, to=to))]
    return [Value(ctx.b, dst, x.shape, name=ctx.b.Cast(x, to=to))]
