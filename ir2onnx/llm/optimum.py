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

import shutil
import tempfile
from pathlib import Path

import onnx
import onnxruntime as ort

from ..errors import Ir2OnnxError
from ..ir.graph import Graph
from ..ir.reader import load_ir
from ..lowering.convert import convert_graph
from ..runtime.stateful import variables
from ..verify import verify_model
from ..writer import save
from .genai import publish, TOKENIZER_FILES
from .interface import is_llm
from .merged_decoder import merge
from .optimum_names import causal_lm, seq2seq_decoder

CONFIG_FILES = ("config.json", "generation_config.json", "preprocessor_config.json",
                "processor_config.json", "feature_extractor_config.json")
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
        publish(tmp, out, folder, (*CONFIG_FILES, *TOKENIZER_FILES))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if summary is not None:
        summary.append("wrote " + ", ".join(written))
    return out
