"""optimum's merged decoder: ``decoder_model.onnx`` (the first step) and
``decoder_with_past_model.onnx`` (every next step) joined into ``decoder_model_merged.onnx``, one
``If`` on the input ``use_cache_branch`` (bool [1]) whose branches are the two graphs, so that
the decoder's weights are stored once (both graphs read the same initializers by name).

The merged model takes the with-past model's inputs plus ``use_cache_branch`` (optimum feeds
False and an empty cache on the first step, True after) and gives the first-step model's
outputs; in the with-past branch ``present.N.encoder.*`` are its ``past_key_values.N.encoder.*``
passed through (optimum keeps the cross-attention cache of the first step).
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from ..errors import Ir2OnnxError


def _made(nodes) -> set:
    """Every tensor name ``nodes`` make, in their sub-graphs too."""
    names = set()
    for node in nodes:
        names.update(o for o in node.output if o)
        for a in node.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                names.update(_made(g.node))
    return names


def _renamed(node, rename: dict, name: str):
    """A copy of ``node`` named ``name`` reading and making the names of ``rename``, in its
    sub-graphs too (an If branch reads outer names)."""
    n = helper.make_node(node.op_type, [rename.get(i, i) for i in node.input],
                         [rename.get(o, o) for o in node.output], name=name, domain=node.domain or None)
    for a in node.attribute:
        if a.HasField("g") or a.graphs:
            graphs = [_renamed_graph(g, rename) for g in ([a.g] if a.HasField("g") else a.graphs)]
            n.attribute.append(helper.make_attribute(a.name, graphs[0] if a.HasField("g") else graphs))
        else:
            n.attribute.append(a)
    return n


def _renamed_graph(graph, rename: dict):
    nodes = [_renamed(node, rename, rename.get(node.name, node.name)) for node in graph.node]
    outputs = []
    for o in graph.output:
        info = type(o)()
        info.CopyFrom(o)
        info.name = rename.get(o.name, o.name)
        outputs.append(info)
    return helper.make_graph(nodes, rename.get(graph.name, graph.name), list(graph.input), outputs,
                             initializer=list(graph.initializer))


def _branch(model, prefix: str, outputs: list, passthrough: dict):
    """``model``'s nodes as an If branch: every tensor they make renamed ``prefix + name``, in
    their sub-graphs too (no branch output may be an outer name, and the two branches make the
    same names), the outputs ``outputs`` (names of the merged model) in order; ``passthrough``:
    output -> outer input, given by an Identity."""
    rename = {name: prefix + name for name in _made(model.graph.node)}
    for node in model.graph.node:  # sub-graphs' node and graph names, unique across the branches
        for a in node.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                rename[g.name] = prefix + g.name
                rename.update((inner.name, prefix + inner.name) for inner in g.node if inner.name)
    nodes, taken = [], set()
    for k, node in enumerate(model.graph.node):
        name = prefix + (node.name or f"{node.op_type}_{k}")
        name = name if name not in taken else f"{name}_{k}"
        taken.add(name)
        nodes.append(_renamed(node, rename, name))
    infos = {o.name: o for o in model.graph.output}
    outs = []
    for name in outputs:
        inner = prefix + "out/" + name
        if name in passthrough:
            nodes.append(helper.make_node("Identity", [passthrough[name]], [inner], name=inner))
        elif name in infos:
            nodes.append(helper.make_node("Identity", [rename.get(name, name)], [inner], name=inner))
        else:
            raise Ir2OnnxError(f"the decoders do not both give '{name}'")
        outs.append(helper.make_value_info(inner, helper.make_tensor_type_proto(
            _elem(model, name, passthrough), None)))
    return helper.make_graph(nodes, prefix.strip("/"), [], outs)


def _elem(model, name: str, passthrough: dict) -> int:
    infos = {i.name: i for i in (*model.graph.input, *model.graph.output)}
    return infos[passthrough.get(name, name)].type.tensor_type.elem_type


def _loose(info, other):
    """``info``'s type with the dims both branches agree on kept, the others symbolic."""
    a, b = info.type.tensor_type.shape.dim, other.type.tensor_type.shape.dim if other else []
    dims = []
    for i, d in enumerate(a):
        same = other is not None and i < len(b) and d.HasField("dim_value") and b[i].HasField("dim_value") \
            and d.dim_value == b[i].dim_value
        dims.append(d.dim_value if same else f"{info.name}_d{i}")
    return helper.make_tensor_value_info(info.name, info.type.tensor_type.elem_type, dims)


def _same(a, b) -> bool:
    x, y = numpy_helper.to_array(a), numpy_helper.to_array(b)
    return x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y)


def _rename_reads(graph, rename: dict) -> None:
    """Every read of a name of ``rename`` in ``graph``'s nodes, their sub-graphs too."""
    for node in graph.node:
        node.input[:] = [rename.get(i, i) for i in node.input]
        for a in node.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                _rename_reads(g, rename)


def merge(first, with_past):
    """The merged decoder (module docstring) of two ModelProtos with their weights."""
    weights = {t.name: t for t in first.graph.initializer}
    differ = {t.name for t in with_past.graph.initializer if t.name in weights and not _same(weights[t.name], t)}
    if differ:  # small constants each conversion names in its own order ('const_6'): the first
        rename = {name: "first/" + name for name in differ}  # step's get names of their own
        for t in first.graph.initializer:
            t.name = rename.get(t.name, t.name)
        _rename_reads(first.graph, rename)
        weights = {t.name: t for t in first.graph.initializer}
    for t in with_past.graph.initializer:
        weights.setdefault(t.name, t)
    outputs = [o.name for o in first.graph.output]
    past_outputs = {o.name for o in with_past.graph.output}
    passthrough = {name: name.replace("present.", "past_key_values.", 1)
                   for name in outputs if name not in past_outputs}
    inputs = {i.name for i in with_past.graph.input}
    missing = [p for p in passthrough.values() if p not in inputs]
    if missing:
        raise Ir2OnnxError(f"the with-past decoder has no input {missing[0]} for the first step's output")
    then_branch = _branch(with_past, "with_past/", outputs, passthrough)
    else_branch = _branch(first, "first/", outputs, {})
    node = helper.make_node("If", ["use_cache_branch"], outputs, name="use_cache_branch/If",
                            then_branch=then_branch, else_branch=else_branch)
    past_infos = {o.name: o for o in with_past.graph.output}
    graph_outputs = [_loose(o, past_infos.get(o.name)) for o in first.graph.output]
    graph_inputs = list(with_past.graph.input) + [
        helper.make_tensor_value_info("use_cache_branch", TensorProto.BOOL, [1])]
    graph = helper.make_graph([node], "decoder_model_merged", graph_inputs, graph_outputs,
                              initializer=list(weights.values()))
    opsets = {}
    for m in (first, with_past):
        for o in m.opset_import:
            opsets[o.domain] = max(opsets.get(o.domain, 0), o.version)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()],
                              producer_name=first.producer_name, producer_version=first.producer_version,
                              ir_version=max(first.ir_version, with_past.ir_version))
    return model
