"""optimum's names and order on converted decoders (:mod:`ir2onnx.llm.optimum`): a decoder LLM's
KV cache as ``past_key_values.N.key/value`` inputs and ``present.N.key/value`` outputs, layer by
layer; a stateful seq2seq decoder's self- and cross-attention caches as
``past_key_values.N.decoder|encoder.key|value`` and ``present.N...``, ``beam_idx`` gone.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from onnx import TensorProto, helper

from ..errors import Ir2OnnxError
from ..ir.graph import Graph
from .genai import _drop_beam_idx, _remove_unused, _rename, prepare
from .interface import cache_layout

_SELF = re.compile(r"past_key_values\.(\d+)\.(decoder|encoder)\.(key|value)")


# -- decoder LLMs ---------------------------------------------------------------------------------
def _order(items, key) -> None:
    """Sort a repeated proto field in place by ``key`` (stable)."""
    ordered = sorted(list(items), key=key)
    del items[:]
    items.extend(ordered)


_KV = re.compile(r"(?:past_key_values|present)\.(\d+)\.(?:(decoder|encoder)\.)?(key|value)")


def _kv_rank(name: str):
    """Plain names first, then the caches: layer by layer; decoder before encoder; key, value."""
    m = _KV.fullmatch(name)
    if m is None:
        return (0, 0, 0, 0)
    return (1, int(m.group(1)), m.group(2) == "encoder", m.group(3) == "value")


# model types whose first-step empty cache optimum-onnx 0.1 sizes by num_key_value_heads; for any
# other type it takes num_attention_heads (ORTModelForCausalLM.__init__)
OPTIMUM_KV_HEAD_TYPES = {"arcee", "deepseek_v3", "cohere", "gemma", "gemma3_text", "glm", "granite",
                         "gpt_oss", "helium", "mistral", "llama", "nemotron", "qwen2", "qwen3",
                         "qwen3_moe", "smollm3", "stablelm"}


def _config(graph: Graph) -> dict:
    path = Path(graph.xml_path).parent / "config.json" if graph.xml_path else None
    try:
        return json.loads(path.read_text()) if path and path.is_file() else {}
    except (OSError, ValueError):
        return {}


def _slice_heads(model, kv_heads: int) -> list[str]:
    """Read each ``past_key_values.*`` input through ``Slice(axis 1, :kv_heads)`` and leave its
    heads dim free: optimum-onnx feeds the first step an empty cache of ``num_attention_heads``
    heads for model types outside OPTIMUM_KV_HEAD_TYPES (0 long, so the slice is the empty cache
    of ``kv_heads``); later steps feed back the model's own ``present.*``, which the slice keeps."""
    graph = model.graph
    past = [i for i in graph.input if i.name.startswith("past_key_values.")]
    renamed = {i.name: i.name + "/heads" for i in past}
    for node in graph.node:
        node.input[:] = [renamed.get(n, n) for n in node.input]
    graph.initializer.extend([helper.make_tensor("past_key_values/heads_starts", TensorProto.INT64, [1], [0]),
                              helper.make_tensor("past_key_values/heads_ends", TensorProto.INT64, [1], [kv_heads]),
                              helper.make_tensor("past_key_values/heads_axes", TensorProto.INT64, [1], [1])])
    for i, info in enumerate(past):
        graph.node.insert(i, helper.make_node(
            "Slice", [info.name, "past_key_values/heads_starts", "past_key_values/heads_ends",
                      "past_key_values/heads_axes"], [renamed[info.name]], name=info.name + "/heads"))
        info.type.tensor_type.shape.dim[1].dim_param = "past_heads"
    return [i.name for i in past]


def causal_lm(graph: Graph, model, summary: list | None = None) -> None:
    """Give a converted decoder LLM (a ModelProto) optimum's names and order (module docstring);
    for a model type optimum-onnx sizes the empty first-step cache of by ``num_attention_heads``
    while the cache has fewer (grouped-query) heads, the cache inputs are sliced to them."""
    facts = prepare(graph, model)
    _order(model.graph.input, lambda i: _kv_rank(i.name))
    _order(model.graph.output, lambda o: _kv_rank(o.name))
    config = _config(graph)
    kind, heads = config.get("model_type"), config.get("num_attention_heads")
    if kind and kind not in OPTIMUM_KV_HEAD_TYPES and isinstance(heads, int) and heads != facts["kv_heads"]:
        _slice_heads(model, facts["kv_heads"])
        if summary is not None:
            summary.append(f"optimum-onnx feeds a '{kind}' model's first step an empty cache of "
                           f"num_attention_heads ({heads}) heads: the cache inputs are sliced to the "
                           f"model's {facts['kv_heads']} KV heads (a copy of the cache per step)")


# -- encoder-decoder models -----------------------------------------------------------------------
def cross_cache_names(graph: Graph) -> dict[str, tuple[int, str, str]]:
    """variable_id -> (layer, "decoder" | "encoder", "key" | "value") for every variable of a
    stateful seq2seq decoder (module docstring)."""
    out, cross = {}, {}
    consumers = graph.consumers()
    attentions = [l.id for l in graph.order if l.type == "ScaledDotProductAttention"]
    for read in graph.order:
        if read.type != "ReadValue":
            continue
        var = read.attrs["variable_id"]
        m = _SELF.match(var)
        if m:
            out[var] = (int(m.group(1)), m.group(2), m.group(3))
            continue
        frontier, found = [read.id], None
        while frontier and found is None:
            lid = frontier.pop()
            for layer, port in consumers.get((lid, 0), []):
                if layer.type == "ScaledDotProductAttention" and port in (1, 2):
                    found = (layer.id, ("key", "value")[port - 1])
                elif layer.type == "Convert":
                    frontier.append(layer.id)
        if found is None:
            raise Ir2OnnxError(f"the decoder's variable '{var}' is neither named past_key_values.N... "
                               f"nor read as the key or value of a ScaledDotProductAttention")
        cross[var] = found
    layers = sorted({a for a, _ in cross.values()}, key=attentions.index)
    for var, (attention, kind) in cross.items():
        out[var] = (layers.index(attention), "encoder", kind)
    if len(set(out.values())) != len(out):
        raise Ir2OnnxError("the decoder's variables do not name one key and one value per layer and "
                           "attention: " + ", ".join(out))
    return out


def _arange_beam_idx(model) -> None:
    """Replace the input ``beam_idx`` by arange(batch of ``input_ids``) computed in the graph: the
    first step reorders nothing (optimum feeds no beam_idx)."""
    graph = model.graph
    beam = next((i for i in graph.input if i.name == "beam_idx"), None)
    if beam is None:
        return
    etype = beam.type.tensor_type.elem_type
    nodes = [
        helper.make_node("Shape", ["input_ids"], ["beam_idx/shape"], start=0, end=1),
        helper.make_node("Squeeze", ["beam_idx/shape"], ["beam_idx/batch"]),
        helper.make_node("Range", ["beam_idx/zero", "beam_idx/batch", "beam_idx/one"], ["beam_idx/i64"]),
        helper.make_node("Cast", ["beam_idx/i64"], ["beam_idx"], to=etype),
    ]
    graph.initializer.extend([helper.make_tensor("beam_idx/zero", TensorProto.INT64, [], [0]),
                              helper.make_tensor("beam_idx/one", TensorProto.INT64, [], [1])])
    for n in reversed(nodes):
        graph.node.insert(0, n)
    keep = [i for i in graph.input if i.name != "beam_idx"]
    del graph.input[:]
    graph.input.extend(keep)


def seq2seq_decoder(graph: Graph, model, with_past: bool) -> None:
    """Give a converted stateful seq2seq decoder optimum's names: the first step's
    (``with_past=False``, converted with ``state="init"``) or every next step's."""
    names = cross_cache_names(graph)
    rename = {}
    for var, (layer, part, kind) in names.items():
        rename[var] = f"past_key_values.{layer}.{part}.{kind}"
        rename[var + ".new"] = f"present.{layer}.{part}.{kind}"
    if with_past:
        _drop_beam_idx(model, {var: cache_layout(graph).get(var, (0, 2))[0] for var in names})
        cross = {var + ".new" for var, (_, part, _) in names.items() if part == "encoder"}
        keep = [o for o in model.graph.output if o.name not in cross]  # optimum keeps its own
        del model.graph.output[:]
        model.graph.output.extend(keep)
        _remove_unused(model.graph)
    else:
        _arange_beam_idx(model)
    _rename(model, rename)
    _order(model.graph.input, lambda i: _kv_rank(i.name))
    _order(model.graph.output, lambda o: _kv_rank(o.name))
