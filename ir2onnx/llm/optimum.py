"""``ir2onnx convert OV_DIR --optimum OUT_DIR``: an optimum-intel folder as the folder that
optimum-onnx's ``ORTModelFor*.from_pretrained(OUT_DIR)`` loads.

What the IR folder holds decides what is written (the folder's config.json,
generation_config.json, preprocessor and tokenizer files are copied beside it):

- ``openvino_model.xml`` of a decoder LLM (``input_ids`` and a KV cache, stateful or not): one
  ``model.onnx`` for ``ORTModelForCausalLM``, optimum's cache convention: inputs ``input_ids``,
  ``attention_mask``, ``position_ids`` (where the IR has them), ``past_key_values.N.key`` /
  ``.value`` (the first step fed an empty cache, [batch, kv heads, 0, head size]); outputs
  ``logits``, ``present.N.key`` / ``.value``, layer by layer. OpenVINO's state (ReadValue/Assign)
  becomes these inputs and outputs, and ``beam_idx`` goes: optimum reorders beams on the cache
  itself, so each ``Gather(cache, beam_idx)`` is an Identity (:func:`ir2onnx.llm.genai.prepare`).
- any other ``openvino_model.xml`` (feature extraction, classification ...): ``model.onnx``, the
  plain conversion, whose names are the IR's (``input_ids``, ``attention_mask``,
  ``token_type_ids`` -> ``last_hidden_state`` for ``ORTModelForFeatureExtraction``).
- ``openvino_encoder_model.xml`` + ``openvino_decoder_model.xml`` (Whisper):
  ``encoder_model.onnx`` (the plain conversion) and, from the stateful decoder, optimum's two
  decoder graphs: the first step (each ReadValue its init value computed in the graph: the
  cross-attention keys and values from ``encoder_hidden_states``, an empty self-attention cache;
  outputs ``logits``, ``present.N.decoder.key/value``, ``present.N.encoder.key/value``), and
  every next step (inputs ``past_key_values.N.decoder.key/value``,
  ``past_key_values.N.encoder.key/value``; outputs ``logits``, ``present.N.decoder.key/value``),
  joined into ``decoder_model_merged.onnx`` (:mod:`ir2onnx.llm.merged_decoder`), or written as
  ``decoder_model.onnx`` + ``decoder_with_past_model.onnx`` where they cannot be merged. A
  stateless decoder (``--disable-stateful``, with ``openvino_decoder_with_past_model.xml``) is
  converted file by file.

OpenVINO names the self-attention variables ``past_key_values.N.decoder.keypresent...``; the
cross-attention ones may be bare numbers, so their layer and key/value come from the
ScaledDotProductAttention that reads them (key: input 1, value: input 2; the layer: that
attention's place among the cross attentions).
"""
from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from ..errors import Ir2OnnxError
from ..ir.graph import Graph
from .genai import TOKENIZER_FILES, _drop_beam_idx, _remove_unused, _rename, prepare
from .interface import cache_layout, is_llm

CONFIG_FILES = ("config.json", "generation_config.json", "preprocessor_config.json",
                "processor_config.json", "feature_extractor_config.json")
_SELF = re.compile(r"past_key_values\.(\d+)\.(decoder|encoder)\.(key|value)")
_MODEL, _ENCODER, _DECODER = "openvino_model.xml", "openvino_encoder_model.xml", "openvino_decoder_model.xml"
_DECODER_WITH_PAST = "openvino_decoder_with_past_model.xml"


def ir_folder(path) -> Path:
    """The optimum-intel folder named by ``path`` (the folder, or one of its .xml files)."""
    p = Path(path)
    folder = p.parent if p.suffix == ".xml" else p
    if not folder.is_dir():
        raise Ir2OnnxError(f"--optimum converts an optimum-intel folder: '{path}' is not a folder")
    if not (folder / _MODEL).is_file() and not ((folder / _ENCODER).is_file() and (folder / _DECODER).is_file()):
        raise Ir2OnnxError(f"'{folder}' has neither {_MODEL} nor {_ENCODER} + {_DECODER} "
                           f"(an optimum-intel export)")
    return folder


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
    import json

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
    from onnx import TensorProto, helper

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
    from onnx import TensorProto, helper

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


# -- the folder -----------------------------------------------------------------------------------
def plan(folder: Path) -> list[tuple[str, str, str]]:
    """(IR file, ONNX file, role) for each model of the folder; role: "causal-lm", "plain",
    "decoder" (stateful, first step), "decoder-with-past" (stateful, next steps)."""
    if (folder / _ENCODER).is_file() and (folder / _DECODER).is_file():
        out = [(_ENCODER, "encoder_model.onnx", "plain")]
        if (folder / _DECODER_WITH_PAST).is_file():  # a stateless export: file by file
            return out + [(_DECODER, "decoder_model.onnx", "plain"),
                          (_DECODER_WITH_PAST, "decoder_with_past_model.onnx", "plain")]
        return out + [(_DECODER, "decoder_model.onnx", "decoder"),
                      (_DECODER, "decoder_with_past_model.onnx", "decoder-with-past")]
    return [(_MODEL, "model.onnx", "model")]


def _merge_decoders(folder: Path, external_data, verify: bool) -> str | None:
    """Replace ``decoder_model.onnx`` and ``decoder_with_past_model.onnx`` in ``folder`` by
    ``decoder_model_merged.onnx`` (:mod:`ir2onnx.llm.merged_decoder`); the reason when they
    cannot be merged (both are kept)."""
    import onnx

    from .merged_decoder import merge

    first, later = folder / "decoder_model.onnx", folder / "decoder_with_past_model.onnx"
    try:
        model = merge(onnx.load(str(first)), onnx.load(str(later)))
    except Ir2OnnxError as e:
        return str(e)
    path = folder / "decoder_model_merged.onnx"
    big = external_data if external_data is not None else model.ByteSize() > 2**31 - 2**24
    onnx.save(model, str(path), save_as_external_data=bool(big), location=path.name + ".data" if big else None)
    onnx.checker.check_model(str(path))
    if verify:
        import onnxruntime as ort

        ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for f in folder.iterdir():
        if f.name.startswith(("decoder_model.onnx", "decoder_with_past_model.onnx")):
            f.unlink()
    return None


def write_folder(model_dir, out_dir, *, opset=None, external_data=None, verify=True,
                 quantized="exact", compressed_weights="dequantize", summary=None,
                 merge: bool = True) -> Path:
    """Convert the optimum-intel folder ``model_dir`` into ``out_dir`` for optimum-onnx (module
    docstring). Every model is converted before anything is written; the files are written to
    a temporary folder beside ``out_dir`` and moved into it at the end. A stateful seq2seq
    decoder becomes ``decoder_model_merged.onnx`` (``merge``, the default: the weights once) or
    ``decoder_model.onnx`` + ``decoder_with_past_model.onnx``."""
    from ..api import load_ir
    from ..lowering.convert import convert_graph
    from ..runtime.stateful import variables
    from ..verify import verify_model
    from ..writer import save

    folder = ir_folder(model_dir)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise Ir2OnnxError(f"--optimum '{out}' exists and is not a folder")
    graphs: dict[str, Graph] = {}
    converted = []
    for xml, onnx_name, role in plan(folder):
        if xml not in graphs:
            graphs[xml] = load_ir(folder / xml)
        graph = graphs[xml]
        if role == "model":
            role = "causal-lm" if is_llm(graph) else "plain"
        if role in ("decoder", "decoder-with-past") and not variables(graph):
            raise Ir2OnnxError(f"{xml} has no state and no {_DECODER_WITH_PAST} beside it: not an "
                               f"optimum-intel decoder")
        conv = convert_graph(graph, opset, quantized=quantized, compressed_weights=compressed_weights,
                             state="init" if role == "decoder" else "inputs")
        if role == "causal-lm":
            causal_lm(graph, conv.model, conv.summary)
        elif role in ("decoder", "decoder-with-past"):
            seq2seq_decoder(graph, conv.model, with_past=role == "decoder-with-past")
        elif variables(graph):
            raise Ir2OnnxError(f"{xml} is stateful but not a decoder LLM (input_ids and a KV "
                               f"cache): optimum-onnx has no model class for it")
        converted.append((onnx_name, conv))
        if summary is not None:
            summary.extend(f"{onnx_name}: {line}" for line in conv.summary)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.ir2onnx-", dir=out.parent))
    try:
        for onnx_name, conv in converted:
            check = (lambda path, c=conv: verify_model(path, c.node_layers, c.opset)) if verify else None
            save(conv, tmp / onnx_name, external_data=external_data, verify=check)
        written = [name for name, _ in converted]
        if merge and any(role == "decoder" for _, _, role in plan(folder)):
            why = _merge_decoders(tmp, external_data, verify)
            if why is None:
                written = [n for n in written if not n.startswith("decoder")] + ["decoder_model_merged.onnx"]
            elif summary is not None:
                summary.append(f"the decoders are not merged ({why}): two files")
        for name in (*CONFIG_FILES, *TOKENIZER_FILES):
            if (folder / name).is_file():
                shutil.copy(folder / name, tmp / name)
        out.mkdir(exist_ok=True)
        for f in tmp.iterdir():
            f.replace(out / f.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if summary is not None:
        summary.append("wrote " + ", ".join(written))
    return out
