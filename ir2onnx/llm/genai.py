"""``ir2onnx convert --genai OUT_DIR``: an LLM IR as a folder onnxruntime-genai runs.

The folder holds ``model.onnx`` (+ ``model.onnx.data`` for big models), ``genai_config.json`` and
the tokenizer files of the IR's folder. The model is the plain conversion with genai's names:

- the KV cache inputs ``past_key_values.N.key`` / ``.value`` and outputs ``present.N.key`` /
  ``.value`` (N, the layer, from OpenVINO's variable ids ``past_key_values.N.keypresent.N.key``;
  an explicit-cache IR, ``--disable-stateful``, has these names already);
- ``input_ids``, ``attention_mask``, ``position_ids`` and ``logits`` as the IR names them;
- ``beam_idx`` removed: genai reorders no beams inside the graph (it runs greedy search or
  reorders the cache itself), so each ``Gather(cache, beam_idx, axis=batch)`` becomes an
  Identity. The plain conversion keeps ``beam_idx``;
- the attention as onnxruntime's ``GroupQueryAttention`` (com.microsoft) where it matches
  (:mod:`ir2onnx.ops._attention_gqa`) and the provider runs it for f32 (cpu, webgpu): it writes
  the new keys and values into genai's cache buffer in place (``past_present_share_buffer``
  true: each cache input is ``[batch, kv heads, max_length, head size]`` and is the present
  output's buffer). An attention that does not match, or a cache that something else reads (its
  shape would be the buffer's, not the tokens'), keeps the whole model decomposed, the buffer
  not shared, and the summary says why;
- with compressed weights at ``accuracy_level`` 0 (exact), saved optimized by onnxruntime
  (:func:`preoptimize`); at 4, onnxruntime's default, left as DequantizeLinear -> MatMul for
  genai's session to fuse (standard ONNX, fast: activations quantized to int8 per block).

``genai_config.json`` takes the layers, KV heads, head size and vocabulary from the IR (the cache
shapes, the logits), and the token ids, attention heads, hidden size, context length and model
type from the IR folder's ``config.json`` and ``generation_config.json`` when present; the
provider (``--genai-provider``) goes in ``session_options.provider_options``.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import onnxruntime as ort
from onnx import TensorProto, helper

from ..errors import Ir2OnnxError
from ..ir.graph import Graph
from ..lowering.convert import convert_graph
from ..lowering.node_lists import captured
from ..ops._state_reorder import REORDER_IF
from ..verify import verify_model
from ..writer import atomic_file, save
from .interface import META_PREFIX, cache_layout, document, interface

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                   "vocab.json", "merges.txt", "tokenizer.model", "added_tokens.json",
                   "chat_template.jinja", "chat_template.json")


def publish(tmp: Path, out: Path, folder: Path | None, names) -> None:
    """The files of ``names`` that ``folder`` holds (its config and tokenizer files) copied into
    the finished folder ``tmp``, then every file of ``tmp`` moved into ``out``: a folder that was
    written in full beside ``out`` before anything of it appears there."""
    for name in names:
        if folder is not None and (folder / name).is_file():
            shutil.copy(folder / name, tmp / name)
    out.mkdir(exist_ok=True)
    for f in tmp.iterdir():
        f.replace(out / f.name)


GENAI_TYPES = {"chatglm", "ernie4_5", "gemma", "gemma2", "gemma3_text", "gpt2", "granite",
               "internlm2", "llama", "mistral", "nemotron", "olmo", "phi", "phi3", "phimoe", "qwen2",
               "qwen3", "smollm3"}  # decoder types onnxruntime-genai 0.18 knows by name
_VARIABLE = re.compile(r"past_key_values\.(\d+)\.(key|value)")


def genai_names(variables: list[str]) -> dict[str, tuple[int, str]]:
    """variable or cache input name -> (layer, "key" | "value"), from the names
    (``past_key_values.N.key...``), else from their order (key, value of layer 0, then 1 ...)."""
    found = {v: _VARIABLE.match(v) for v in variables}
    if all(found.values()):
        out = {v: (int(m.group(1)), m.group(2)) for v, m in found.items()}
    else:
        out = {v: (i // 2, ("key", "value")[i % 2]) for i, v in enumerate(variables)}
    if len(set(out.values())) != len(out):
        raise Ir2OnnxError("the KV cache variables do not name one key and one value per layer: "
                           + ", ".join(variables))
    return out


def _rename(model, names: dict[str, str]) -> None:
    def walk(graph):
        for v in (*graph.input, *graph.output, *graph.value_info):
            v.name = names.get(v.name, v.name)
        for node in graph.node:
            node.input[:] = [names.get(n, n) for n in node.input]
            node.output[:] = [names.get(n, n) for n in node.output]
            for a in node.attribute:
                if a.g.node:
                    walk(a.g)

    walk(model.graph)


def _drop_beam_idx(model, caches: dict[str, int]) -> None:
    """Each Gather of a cache input (``caches``: name -> batch axis) by an index computed from
    beam_idx becomes an Identity, and so does the Where that zeroes rows of out-of-range indices
    (none: beam_idx is arange(batch)); what computed the index is then unused and removed. Any
    other use of beam_idx is refused."""
    graph = model.graph
    if not any(i.name == "beam_idx" for i in graph.input):
        return
    _keep_arange_branches(graph)
    _remove_unused(graph)  # the Ifs' conditions
    _batch_for_beam_count(model, caches)
    tainted = {"beam_idx"}
    for node in graph.node:  # topological order
        if not any(n in tainted for n in node.input):
            continue
        axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
        if node.op_type == "Gather" and node.input[0] in caches and caches[node.input[0]] == axis:
            node.op_type, node.input[:] = "Identity", [node.input[0]]
            del node.attribute[:]
        elif node.op_type == "Where" and node.input[0] in tainted and not (
                {node.input[1], node.input[2]} & tainted):  # OpenVINO's zeros for an index out
            node.op_type, node.input[:] = "Identity", [node.input[1]]  # of range: none here
        else:
            tainted.update(node.output)
    _remove_unused(graph)
    users = [n for n in graph.node if "beam_idx" in n.input]
    if users:
        raise Ir2OnnxError(f"beam_idx feeds {users[0].op_type} node '{users[0].name}', not a Gather "
                           f"of the KV cache on its batch axis: cannot remove it for genai")
    keep = [i for i in graph.input if i.name != "beam_idx"]
    del graph.input[:]
    graph.input.extend(keep)


def _keep_arange_branches(graph) -> None:
    """Each If that skips a cache reorder when beam_idx is arange(batch) (the plain conversion's
    :data:`~ir2onnx.ops._state_reorder.REORDER_IF`) becomes its then-branch: beam_idx is that."""
    nodes = []
    for node in graph.node:
        if node.op_type != "If" or node.doc_string != REORDER_IF:
            nodes.append(node)
            continue
        branch = next(a.g for a in node.attribute if a.name == "then_branch")
        names = {o.name: out for o, out in zip(branch.output, node.output)}
        for inner in branch.node:
            inner.input[:] = [names.get(i, i) for i in inner.input]
            inner.output[:] = [names.get(o, o) for o in inner.output]
            nodes.append(inner)
    del graph.node[:]
    graph.node.extend(nodes)


def _batch_for_beam_count(model, caches: dict[str, int]) -> None:
    """``Shape(beam_idx)`` (the reordered cache's rows, :meth:`~ir2onnx.ops._state_reorder.
    Reordered.shape_vector`) becomes a cache's batch dim, ``Gather(Shape(cache), [axis])``:
    beam_idx is arange(batch)."""
    if not caches:
        return
    cache, axis = next(iter(caches.items()))
    nodes = []
    for node in model.graph.node:
        if node.op_type == "Shape" and node.input[0] == "beam_idx":
            whole, index = node.output[0] + "/cache_shape", node.output[0] + "/batch_axis"
            model.graph.initializer.append(helper.make_tensor(index, TensorProto.INT64, [1], [axis]))
            nodes.append(helper.make_node("Shape", [cache], [whole], name=node.name + "/cache_shape"))
            node = helper.make_node("Gather", [whole, index], list(node.output), name=node.name, axis=0)
        nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)


def _remove_unused(graph) -> None:
    """Drop nodes none of whose outputs is used (names read inside an If's branches are used)."""
    while True:
        used = {o.name for o in graph.output}
        for node in graph.node:
            used.update(node.input)
            used.update(captured(node))
        dead = [n for n in graph.node if not any(o in used for o in n.output)]
        if not dead:
            return
        for node in dead:
            graph.node.remove(node)


def prepare(graph: Graph, model) -> dict:
    """Rename ``model`` (a ModelProto, initializers apart) for genai and drop beam_idx; returns
    what genai_config.json takes from the IR."""
    document(graph, model)
    iface = interface(model)
    if iface is None or iface.logits != "logits":
        raise Ir2OnnxError("--genai needs an LLM IR: inputs input_ids (attention_mask, "
                           "position_ids), a KV cache (stateful or past_key_values.N.key/value "
                           "inputs) and a 'logits' output")
    layers = genai_names([c.input for c in iface.caches])
    names = {}
    for c in iface.caches:
        layer, kind = layers[c.input]
        names[c.input] = f"past_key_values.{layer}.{kind}"
        names[c.output] = f"present.{layer}.{kind}"
    _drop_beam_idx(model, {c.input: c.batch_axis for c in iface.caches})
    _rename(model, names)
    for meta in model.metadata_props:
        if meta.key.startswith(META_PREFIX):
            old = meta.key[len(META_PREFIX):]
            value = json.loads(meta.value)
            value["output"] = names[value["output"]]
            meta.key, meta.value = META_PREFIX + names[old], json.dumps(value)
    shape = iface.caches[0].initial_shape
    c = iface.caches[0]
    heads = [d for i, d in enumerate(shape) if i not in (c.batch_axis, c.sequence_axis)]
    if len(shape) != 4 or c.batch_axis != 0 or c.sequence_axis != 2 or not all(isinstance(d, int) for d in heads):
        raise Ir2OnnxError(f"genai takes a KV cache of [batch, heads, sequence, head size]; "
                           f"this IR's is {shape} (batch axis {c.batch_axis}, sequence axis {c.sequence_axis})")
    logits = next(o for o in model.graph.output if o.name == "logits").type.tensor_type.shape.dim
    return {"layers": 1 + max(layer for layer, _ in layers.values()), "kv_heads": heads[0],
            "head_size": heads[1], "vocab": logits[-1].dim_value or None,
            "inputs": [i.name for i in model.graph.input], "stateful": bool(cache_layout(graph))}


def _json(path: Path) -> dict:
    try:
        return json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, ValueError):
        return {}


def genai_config(facts: dict, folder: Path | None, provider: str = "cpu", shared: bool = False) -> dict:
    """genai_config.json from the IR's facts and the IR folder's config.json and
    generation_config.json (missing entries fall back to what the IR shows); ``provider``'s
    provider_options; ``shared``: the model writes its cache in place (GroupQueryAttention)."""
    hf = _json(folder / "config.json") if folder else {}
    gen = _json(folder / "generation_config.json") if folder else {}
    text = hf.get("text_config", {})
    get = lambda key, default=None: gen.get(key, hf.get(key, text.get(key, default)))  # noqa: E731
    heads = hf.get("num_attention_heads", text.get("num_attention_heads", facts["kv_heads"]))
    context = hf.get("max_position_embeddings", text.get("max_position_embeddings", 4096))
    kind = hf.get("model_type", "llama")
    inputs = {"input_ids": "input_ids"}
    for name in ("attention_mask", "position_ids"):
        if name in facts["inputs"]:
            inputs[name] = name
    inputs.update(past_key_names="past_key_values.%d.key", past_value_names="past_key_values.%d.value")
    eos = get("eos_token_id", 0)
    decoder = {
        "session_options": {"log_id": "onnxruntime-genai",
                            "provider_options": [o for o in [PROVIDERS[provider][0]] if o]},
        "filename": "model.onnx", "head_size": facts["head_size"],
        "hidden_size": hf.get("hidden_size", text.get("hidden_size", heads * facts["head_size"])),
        "inputs": inputs,
        "outputs": {"logits": "logits", "present_key_names": "present.%d.key",
                    "present_value_names": "present.%d.value"},
        "num_attention_heads": heads, "num_hidden_layers": facts["layers"],
        "num_key_value_heads": facts["kv_heads"]}
    model = {"bos_token_id": get("bos_token_id", 1), "context_length": context, "decoder": decoder,
             "eos_token_id": eos, "pad_token_id": get("pad_token_id", eos if isinstance(eos, int) else eos[0]),
             "type": kind if kind in GENAI_TYPES else "llama",
             "vocab_size": facts["vocab"] or hf.get("vocab_size")}
    search = {"diversity_penalty": 0.0, "do_sample": False, "early_stopping": True,
              "length_penalty": 1.0, "max_length": context, "min_length": 0,
              "no_repeat_ngram_size": 0, "num_beams": 1, "num_return_sequences": 1,
              "past_present_share_buffer": shared, "repetition_penalty": 1.0, "temperature": 1.0,
              "top_k": 1, "top_p": 1.0}
    return {"model": model, "search": search}


# provider -> (genai_config provider_options entry, whether its GroupQueryAttention takes f32): onnxruntime's
# CUDA and DirectML kernels take f16/bf16 only (onnxruntime-genai's model builder keeps repeat_kv there)
PROVIDERS = {"cpu": (None, True), "cuda": ({"cuda": {}}, False), "dml": ({"dml": {}}, False),
             "webgpu": ({"webgpu": {}}, True)}

ACCURACY_LEVELS = (0, 4)  # MatMulNBits: 0 exact (f32 activations), 4 int8 activations (onnxruntime's default)


def preoptimize(path: Path) -> None:
    """Replace the model at ``path`` by onnxruntime's extended-level optimization of it, made with
    ``session.qdq_matmulnbits_accuracy_level`` 0: onnxruntime fuses DequantizeLinear -> MatMul of
    packed weights into MatMulNBits, which by default (accuracy level 4) quantizes the
    activations to int8 (greedy tokens then part from OpenVINO's after a few steps); genai's
    session options cannot set that entry, so the folder's model holds the fused nodes already."""
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".ir2onnx-") as tmp:
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        opts.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", "0")
        opts.optimized_model_filepath = str(Path(tmp) / path.name)
        data = path.with_name(path.name + ".data")
        if data.exists():
            opts.add_session_config_entry("session.optimized_model_external_initializers_file_name",
                                          data.name)
            opts.add_session_config_entry(
                "session.optimized_model_external_initializers_min_size_in_bytes", "1024")
        ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        for f in Path(tmp).iterdir():
            os.replace(f, path.parent / f.name)


def shares_buffer(model) -> bool:
    """Whether every cache input is read only by GroupQueryAttention (as its past key or value)
    and every present output is a GroupQueryAttention's: then genai may hand both the same
    buffer. The Identities between them (the one that replaced beam_idx's Gather, a Result's)
    are bypassed first."""
    graph = model.graph
    caches = {i.name for i in graph.input if _VARIABLE.fullmatch(i.name)}
    presents = {o.name for o in graph.output if o.name.startswith("present.")}
    if not caches:
        return False
    alias = {n.output[0]: n.input[0] for n in graph.node if n.op_type == "Identity" and n.input[0] in caches}
    if alias.keys() & presents:
        return False
    for node in graph.node:
        node.input[:] = [alias.get(i, i) for i in node.input]
    readers: dict = {}
    for node in graph.node:
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
    by_gqa = {o: n for n in graph.node if n.op_type == "GroupQueryAttention" for o in n.output[1:]}
    for node in list(graph.node):  # a Result's Identity: the GroupQueryAttention writes the output
        if node.op_type == "Identity" and node.output[0] in presents and node.input[0] in by_gqa \
                and readers[node.input[0]] == 1:
            gqa = by_gqa[node.input[0]]
            gqa.output[list(gqa.output).index(node.input[0])] = node.output[0]
            graph.node.remove(node)
    _remove_unused(graph)
    for node in graph.node:
        gqa = node.op_type == "GroupQueryAttention"
        for k, name in enumerate(node.input):
            if name in caches and not (gqa and k in (3, 4)):
                return False
        if not gqa:
            if presents & set(node.output):
                return False
    made = {o for n in graph.node if n.op_type == "GroupQueryAttention" for o in n.output[1:]}
    return presents <= made


def write_folder(graph: Graph, out_dir, *, opset=None, external_data=None, verify=True,
                 quantized="exact", compressed_weights="dequantize", summary=None,
                 accuracy_level: int = 4, provider: str = "cpu") -> Path:
    """Convert ``graph`` into ``out_dir`` for onnxruntime-genai (see the module docstring); the
    folder is written only when the conversion succeeds. ``accuracy_level``: what onnxruntime's
    MatMulNBits computes for compressed weights, 4 (its default: activations quantized to int8
    per block, as OpenVINO's CPU plugin does by default; 5-20x faster per token) or 0 (f32
    activations, OpenVINO's exact settings: the tokens are OpenVINO's). ``provider``: the
    onnxruntime execution provider genai runs it on (:data:`PROVIDERS`)."""
    out = Path(out_dir)
    if accuracy_level not in ACCURACY_LEVELS:
        raise Ir2OnnxError(f"accuracy level {accuracy_level}: choose 0 (exact) or 4 (int8 activations)")
    if provider not in PROVIDERS:
        raise Ir2OnnxError(f"--genai-provider {provider}: choose one of {', '.join(PROVIDERS)}")
    if accuracy_level == 0 and provider != "cpu":
        raise Ir2OnnxError(f"--accuracy-level 0 saves model.onnx optimized for onnxruntime's CPU kernels; "
                           f"with --genai-provider {provider} leave the level to the provider")
    if out.exists() and not out.is_dir():
        raise Ir2OnnxError(f"--genai '{out}' exists and is not a folder")
    options = dict(quantized=quantized, compressed_weights=compressed_weights)
    kept = f"the {provider} provider's GroupQueryAttention takes f16 only"
    shared = False
    if PROVIDERS[provider][1]:
        conv = convert_graph(graph, opset, attention="gqa", **options)
        facts = prepare(graph, conv.model)
        shared = shares_buffer(conv.model)
        if conv.attention_kept:
            kept = conv.attention_kept[0]
        elif not any(n.op_type == "GroupQueryAttention" for n in conv.model.graph.node):
            kept = "the IR's attention is not a ScaledDotProductAttention"
        elif not shared:
            kept = "something besides GroupQueryAttention reads the KV cache"
    if not shared:
        conv = convert_graph(graph, opset, **options)
        facts = prepare(graph, conv.model)
    folder = Path(graph.xml_path).parent if graph.xml_path else None
    config = genai_config(facts, folder, provider, shared)
    if summary is not None:
        summary.extend(line for line in conv.summary if "GroupQueryAttention" not in line)
        summary.append("the attention is onnxruntime's GroupQueryAttention, the KV cache written in place "
                       "(past_present_share_buffer)" if shared else
                       f"the attention stays decomposed, the KV cache concatenated ({kept})")
        kind = _json(folder / "config.json").get("model_type") if folder else None
        if kind and kind not in GENAI_TYPES:
            summary.append(f"genai has no model type '{kind}': genai_config.json says 'llama' "
                           f"(the graph holds the architecture)")
    out.mkdir(parents=True, exist_ok=True)
    check = (lambda path: verify_model(path, conv.node_layers, conv.opset)) if verify else None
    save(conv, out / "model.onnx", external_data=external_data, verify=check,
         reads=(graph.xml_path, graph.bin_path))
    if any(n.op_type == "DequantizeLinear" for n in conv.model.graph.node):
        if accuracy_level == 0:
            preoptimize(out / "model.onnx")
        if summary is not None:
            summary.append("model.onnx is saved optimized by onnxruntime, its compressed weights as "
                           "MatMulNBits with accuracy_level 0 (exact; genai sets no session config)"
                           if accuracy_level == 0 else
                           "compressed weights: genai's onnxruntime runs them as MatMulNBits at its "
                           "default accuracy level 4 (int8 activations; --accuracy-level 0: exact, slower)")
    with atomic_file(out / "genai_config.json", "w", what="genai_config.json") as f:
        f.write(json.dumps(config, indent=4) + "\n")
    for name in TOKENIZER_FILES:
        if folder and (folder / name).is_file():
            shutil.copy(folder / name, out / name)
    return out
