"""``ir2onnx convert OV_DIR --genai OUT_DIR`` on an optimum-intel Whisper folder: the folder
onnxruntime-genai runs as its ``whisper`` model type.

genai drives two models:

- ``encoder.onnx``: input ``audio_features`` [batch, mels, 3000]; outputs
  ``encoder_hidden_states`` and, per layer, ``present_key_cross_N`` / ``present_value_cross_N``
  (the cross-attention keys and values, computed once). It is the IR encoder followed by the
  part of the first-step decoder (:mod:`ir2onnx.llm.optimum`'s ``decoder_model.onnx``) that
  computes the cross-attention cache from ``encoder_hidden_states``, joined into one graph.
- ``decoder.onnx``: inputs ``input_ids`` and, per layer, ``past_key_self_N``,
  ``past_value_self_N``, ``past_key_cross_N``, ``past_value_cross_N``; outputs ``logits``,
  ``present_key_self_N``, ``present_value_self_N``: optimum's ``decoder_with_past_model.onnx``
  renamed (``encoder_hidden_states``, which it no longer reads, removed). genai feeds an empty
  self-attention cache on the first step.

``genai_config.json`` (type ``whisper``) takes the sizes and token ids from the IR folder's
config.json and generation_config.json; the tokenizer files are copied. No audio processor
config is written: the caller gives the log-mel features (``og.NamedTensors`` with
``audio_features``), as ``WhisperFeatureExtractor`` computes them.
"""
from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import onnx
from onnx import compose

from ..errors import Ir2OnnxError
from ..lowering.node_lists import captured
from .genai import _remove_unused, _rename, publish, TOKENIZER_FILES
from .optimum import ir_folder, write_folder as write_optimum

_CACHE = re.compile(r"(past_key_values|present)\.(\d+)\.(decoder|encoder)\.(key|value)")


def genai_cache_name(name: str) -> str:
    """optimum's ``past_key_values.N.decoder.key`` -> genai's ``past_key_self_N`` (``encoder``:
    ``cross``; ``present.`` -> ``present_``); other names unchanged."""
    m = _CACHE.fullmatch(name)
    if m is None:
        return name
    kind, layer, part, which = m.groups()
    return f"{'past' if kind == 'past_key_values' else 'present'}_{which}_{'self' if part == 'decoder' else 'cross'}_{layer}"


def _keep_inputs_used(graph) -> None:
    used = {i for n in graph.node for i in (*n.input, *captured(n))} | {o.name for o in graph.output}
    keep = [i for i in graph.input if i.name in used]
    del graph.input[:]
    graph.input.extend(keep)
    keep = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(keep)


def encoder_model(encoder, first_decoder):
    """The genai encoder (module docstring) from optimum's encoder_model and decoder_model
    (ModelProtos with their weights)."""
    graph = first_decoder.graph
    keep = [o for o in graph.output if _CACHE.fullmatch(o.name) and ".encoder." in o.name]
    del graph.output[:]
    graph.output.extend(keep)
    _remove_unused(graph)
    _keep_inputs_used(graph)
    if [i.name for i in graph.input] != ["encoder_hidden_states"]:
        raise Ir2OnnxError("the decoder's cross-attention cache is computed from more than "
                           f"encoder_hidden_states ({', '.join(i.name for i in graph.input)}): "
                           f"genai computes it in the encoder")
    cross = compose.add_prefix(first_decoder, "cross/", rename_inputs=False, rename_outputs=False)
    del cross.metadata_props[:]
    del encoder.metadata_props[:]
    hidden = encoder.graph.output[0].name
    merged = compose.merge_models(encoder, cross, io_map=[(hidden, "encoder_hidden_states")])
    names = {o.name: genai_cache_name(o.name) for o in merged.graph.output}
    names[hidden] = "encoder_hidden_states"
    names[encoder.graph.input[0].name] = "audio_features"
    _rename(merged, names)
    hidden_info = next(o for o in encoder.graph.output if o.name == hidden)
    merged.graph.output.insert(0, hidden_info)
    merged.graph.output[0].name = "encoder_hidden_states"
    return merged


def decoder_model(with_past):
    """genai's decoder (module docstring) from optimum's decoder_with_past_model (a ModelProto)."""
    _rename(with_past, {n: genai_cache_name(n) for n in
                        [i.name for i in with_past.graph.input] + [o.name for o in with_past.graph.output]})
    _keep_inputs_used(with_past.graph)
    return with_past


def genai_config(folder: Path, encoder, decoder) -> dict:
    """genai_config.json for the whisper type (sizes from config.json, else from the models)."""
    hf = json.loads((folder / "config.json").read_text()) if (folder / "config.json").is_file() else {}
    gen = (json.loads((folder / "generation_config.json").read_text())
           if (folder / "generation_config.json").is_file() else {})
    get = lambda key, default=None: gen.get(key, hf.get(key, default))  # noqa: E731
    cross = next(o for o in encoder.graph.output if o.name == "present_key_cross_0").type.tensor_type.shape.dim
    heads, head_size = cross[1].dim_value, cross[3].dim_value
    layers = sum(1 for o in decoder.graph.output if o.name.startswith("present_key_self_"))
    hidden = hf.get("d_model", heads * head_size)
    logits = next(o for o in decoder.graph.output if o.name == "logits").type.tensor_type.shape.dim

    def part(filename, inputs, outputs, n_layers):
        return {"session_options": {"log_id": "onnxruntime-genai", "provider_options": []},
                "filename": filename, "head_size": head_size, "hidden_size": hidden,
                "inputs": inputs, "outputs": outputs, "num_attention_heads": heads,
                "num_hidden_layers": n_layers, "num_key_value_heads": heads}

    eos = get("eos_token_id", 0)
    model = {
        "bos_token_id": get("bos_token_id", get("decoder_start_token_id", 0)),
        "context_length": hf.get("max_target_positions", 448),
        "decoder": part("decoder.onnx",
                        {"input_ids": "input_ids", "past_key_names": "past_key_self_%d",
                         "past_value_names": "past_value_self_%d",
                         "cross_past_key_names": "past_key_cross_%d",
                         "cross_past_value_names": "past_value_cross_%d"},
                        {"logits": "logits", "present_key_names": "present_key_self_%d",
                         "present_value_names": "present_value_self_%d"}, layers),
        "encoder": part("encoder.onnx", {"audio_features": "audio_features"},
                        {"encoder_hidden_states": "encoder_hidden_states",
                         "cross_present_key_names": "present_key_cross_%d",
                         "cross_present_value_names": "present_value_cross_%d"},
                        hf.get("encoder_layers", layers)),
        "eos_token_id": eos, "pad_token_id": get("pad_token_id", eos if isinstance(eos, int) else eos[0]),
        "type": "whisper", "vocab_size": logits[-1].dim_value or hf.get("vocab_size")}
    search = {"diversity_penalty": 0.0, "do_sample": False, "early_stopping": True,
              "length_penalty": 1.0, "max_length": model["context_length"], "min_length": 0,
              "no_repeat_ngram_size": 0, "num_beams": 1, "num_return_sequences": 1,
              "past_present_share_buffer": False, "repetition_penalty": 1.0, "temperature": 1.0,
              "top_k": 1, "top_p": 1.0}
    return {"model": model, "search": search}


def write_folder(model_dir, out_dir, *, opset=None, external_data=None, verify=True,
                 quantized="exact", compressed_weights="dequantize", summary=None) -> Path:
    """Convert the optimum-intel Whisper folder ``model_dir`` into ``out_dir`` for
    onnxruntime-genai (module docstring): optimum's three models first (into a temporary
    folder), then joined and renamed; the folder is written only when all of it succeeded."""
    folder = ir_folder(model_dir)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise Ir2OnnxError(f"--genai '{out}' exists and is not a folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.ir2onnx-", dir=out.parent))
    try:
        parts = write_optimum(folder, tmp / "optimum", opset=opset, verify=verify, quantized=quantized,
                              compressed_weights=compressed_weights, summary=summary, merge=False)
        if not (parts / "decoder_with_past_model.onnx").is_file():
            raise Ir2OnnxError("--genai takes a Whisper-style folder: openvino_encoder_model.xml and a "
                               "stateful openvino_decoder_model.xml")
        encoder = encoder_model(onnx.load(str(parts / "encoder_model.onnx")),
                                onnx.load(str(parts / "decoder_model.onnx")))
        decoder = decoder_model(onnx.load(str(parts / "decoder_with_past_model.onnx")))
        config = genai_config(folder, encoder, decoder)
        done = tmp / "genai"
        done.mkdir()
        for name, model in (("encoder.onnx", encoder), ("decoder.onnx", decoder)):
            big = external_data if external_data is not None else model.ByteSize() > 2**31 - 2**24
            onnx.save(model, str(done / name), save_as_external_data=bool(big),
                      location=name + ".data" if big else None)
            onnx.checker.check_model(str(done / name))
        (done / "genai_config.json").write_text(json.dumps(config, indent=4) + "\n")
        publish(done, out, folder, TOKENIZER_FILES)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if summary is not None:
        summary[:] = [line for line in summary if not line.startswith("wrote ")]
        summary.append("wrote encoder.onnx (the encoder and the cross-attention cache), decoder.onnx, "
                       "genai_config.json (type whisper)")
    return out
