"""ReadValue-3/-6 and Assign-3/-6: a stateful model's variables made explicit.

ONNX has no state, so each variable becomes a graph input named by its ``variable_id`` (what
ReadValue reads) and a graph output ``<variable_id>.new`` (what Assign writes; the input passed
through when nothing assigns it). The caller feeds the state: on the first step the value
ReadValue's init sub-graph computes (for a KV-cache: zeros with a 0-length sequence axis), then
each step's ``.new``. ReadValue's init input is therefore not part of the ONNX computation.

With ``state="init"`` (:func:`ir2onnx.lowering.convert.convert_graph`) the model is the first step
alone instead: each ReadValue is its init input, computed in the graph (no state inputs), and the
``.new`` outputs are what the first step leaves in the variables (optimum's decoder without past,
whose cross-attention cache is computed from the encoder's output: :mod:`ir2onnx.llm.optimum`).
"""
from __future__ import annotations

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.builder import Value
from ..lowering.registry import lowers

NEW = ".new"


def variable(layer, inputs):
    """(element type, shape) of a ReadValue's variable: variable_type/variable_shape when given,
    else the output port's."""
    port = layer.outputs[0]
    etype = layer.attrs.get("variable_type") or port.etype or (inputs[0].etype if inputs else None)
    if etype is None or etype.name in ("dynamic", "undefined"):
        etype = port.etype or (inputs[0].etype if inputs else None)
    shape = layer.attrs.get("variable_shape")
    if shape is None:  # not given, or "..." (dynamic rank): the output port's
        shape = port.shape
    if etype is None:
        raise UnsupportedLayer(layer, "the variable's element type is not known")
    if shape is None:
        raise UnsupportedLayer(layer, "a variable of dynamic rank cannot be an ONNX graph input")
    return etype, shape


def _read(ctx, layer, inputs):
    if ctx.graph is not ctx.top:
        raise UnsupportedLayer(layer, "a variable read inside a sub-graph")
    var = layer.attrs["variable_id"]
    if var in ctx.state_inputs:
        return [ctx.state_inputs[var]]
    etype, shape = variable(layer, inputs)
    if ctx.state == "init":
        if not inputs:
            raise UnsupportedLayer(layer, "a variable without an init input has no first-step value "
                                          "in the graph (state='init')")
        if not ctx.b.is_free(var + NEW):
            raise UnsupportedLayer(layer, f"variable '{var}' has the name of another tensor")
        ctx.b.reserve(var + NEW)
        ctx.state_inputs[var] = inputs[0]
        return [inputs[0]]
    ctx.onnx_type(layer, etype)
    if not ctx.b.is_free(var) or not ctx.b.is_free(var + NEW):
        raise UnsupportedLayer(layer, f"variable '{var}' has the name of another tensor")
    name = ctx.b.reserve(var)
    ctx.b.reserve(var + NEW)
    ctx.b.inputs.append(ctx.b.value_info(name, etype, shape, dim_prefix=name))
    v = Value(ctx.b, etype, shape, name=name)
    ctx.state_inputs[var] = v
    return [v]


def _assign(ctx, layer, inputs):
    var = layer.attrs["variable_id"]
    if var not in ctx.state_inputs:
        raise InvalidLayer(layer, f"no ReadValue reads variable '{var}' (or it comes later)")
    if var in ctx.state_outputs:
        raise InvalidLayer(layer, f"variable '{var}' is assigned twice")
    x, state = inputs[0], ctx.state_inputs[var]
    if x.etype != state.etype:
        raise InvalidLayer(layer, f"assigns {x.etype.name} to the {state.etype.name} variable '{var}'")
    ctx.b.Identity(x, _names=[var + NEW])
    shape = x.shape if ctx.state == "init" else state.shape  # init: the first step's value
    ctx.state_outputs[var] = ctx.b.value_info(var + NEW, state.etype, shape)
    return [x] * len(layer.outputs)


@lowers("ReadValue", "opset3")
def read_value3(ctx, layer, inputs):
    """ReadValue-3 -> a graph input named variable_id (the init input is the caller's first state)."""
    return _read(ctx, layer, inputs)


@lowers("ReadValue", "opset6")
def read_value6(ctx, layer, inputs):
    """ReadValue-6 -> a graph input named variable_id, typed by variable_type/variable_shape (the
    init input, or zeros without one, is the caller's first state)."""
    return _read(ctx, layer, inputs)


@lowers("Assign", "opset3")
def assign3(ctx, layer, inputs):
    """Assign-3 -> Identity into the graph output ``<variable_id>.new``."""
    return _assign(ctx, layer, inputs)


@lowers("Assign", "opset6")
def assign6(ctx, layer, inputs):
    """Assign-6 -> Identity into the graph output ``<variable_id>.new``."""
    return _assign(ctx, layer, inputs)
