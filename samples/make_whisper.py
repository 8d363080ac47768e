"""Regenerate samples/whisper/: a tiny random-weight Whisper exported by optimum-intel, as people
download speech-to-text IRs (run by hand; needs torch, transformers and optimum-intel[openvino],
which are not test dependencies).

    python samples/make_whisper.py

Generated with optimum-intel 2.2, transformers 5.5.4, torch 2.13 and OpenVINO 2026.4.

The model is built from a ``WhisperConfig`` of tiny sizes (d_model 64, 2 encoder and 2 decoder
layers, 4 heads, vocabulary 100, the real 80 mel bins and 3000 frames; seed 0; the hub is not
needed), saved with ``save_pretrained`` beside a ``WhisperFeatureExtractor``, then exported with
``optimum-cli export openvino --task automatic-speech-recognition-with-past`` (stateful by
default: ``openvino_encoder_model.xml`` input_features -> last_hidden_state, and
``openvino_decoder_model.xml`` input_ids, encoder_hidden_states, beam_idx -> logits, its
self-attention cache in ReadValue/Assign variables named ``past_key_values.N.decoder.key...``
and its cross-attention cache in variables whose init value is computed from
encoder_hidden_states). The folder keeps what optimum writes beside the IRs plus
``greedy.json``: OpenVINO's greedy tokens at the exact settings for the features
``numpy.random.default_rng(FEATURE_SEED).standard_normal((1, 80, 3000))`` (f32), from the
decoder start token, driven by the plain loop below, so tests can compare without generating.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "whisper"
FEATURE_SEED = 0
NEW_TOKENS = 12
EXACT = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32",
         "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}
TINY = dict(vocab_size=100, num_mel_bins=80, d_model=64, encoder_layers=2, decoder_layers=2,
            encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
            decoder_ffn_dim=128, max_source_positions=1500, max_target_positions=64,
            decoder_start_token_id=1, bos_token_id=1, eos_token_id=2, pad_token_id=0,
            begin_suppress_tokens=None, suppress_tokens=None, init_std=0.2)
KEEP = ("openvino_encoder_model.xml", "openvino_encoder_model.bin", "openvino_decoder_model.xml",
        "openvino_decoder_model.bin", "config.json", "generation_config.json",
        "preprocessor_config.json", "processor_config.json", "tokenizer.json", "tokenizer_config.json")


def features() -> np.ndarray:
    """The log-mel features greedy.json decodes: normal noise of the encoder's input shape."""
    return np.random.default_rng(FEATURE_SEED).standard_normal((1, 80, 3000)).astype(np.float32)


def greedy(folder: Path, feats: np.ndarray, new_tokens: int, start: int) -> list[int]:
    """OpenVINO's greedy tokens at the exact settings: the encoder once, then the stateful
    decoder token by token from ``start`` (beam_idx arange(batch)), until ``new_tokens``."""
    import openvino as ov

    core = ov.Core()
    encoder = core.compile_model(str(folder / "openvino_encoder_model.xml"), "CPU", EXACT)
    hidden = np.array(encoder({"input_features": feats})["last_hidden_state"])
    decoder = core.compile_model(str(folder / "openvino_decoder_model.xml"), "CPU", EXACT)
    request = decoder.create_infer_request()
    request.reset_state()
    ids, tokens = [start], []
    for _ in range(new_tokens):
        res = request.infer({"input_ids": np.array([ids], np.int64), "encoder_hidden_states": hidden,
                             "beam_idx": np.arange(1, dtype=np.int32)})
        token = int(np.argmax(res["logits"][0, -1]))
        tokens.append(token)
        ids = [token]
    return tokens


def main() -> None:
    import torch
    from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration

    torch.manual_seed(0)
    model = WhisperForConditionalGeneration(WhisperConfig(**TINY)).eval()
    with tempfile.TemporaryDirectory() as tmp:
        hf, ov_dir = Path(tmp) / "hf", Path(tmp) / "ov"
        model.save_pretrained(hf)
        WhisperFeatureExtractor(feature_size=80).save_pretrained(hf)
        subprocess.run([str(Path(sys.executable).with_name("optimum-cli")), "export", "openvino",
                        "--model", str(hf), "--task", "automatic-speech-recognition-with-past",
                        "--weight-format", "fp32", str(ov_dir)], check=True)
        shutil.rmtree(OUT, ignore_errors=True)
        OUT.mkdir(parents=True)
        for f in KEEP:
            if (ov_dir / f).is_file():
                shutil.copy(ov_dir / f, OUT / f)
    tokens = greedy(OUT, features(), NEW_TOKENS, TINY["decoder_start_token_id"])
    (OUT / "greedy.json").write_text(json.dumps(
        {"feature_seed": FEATURE_SEED, "start": TINY["decoder_start_token_id"], "tokens": tokens,
         "openvino_config": EXACT}, indent=1) + "\n")
    size = sum(f.stat().st_size for f in OUT.iterdir())
    print(f"whisper: {size / 1e6:.2f} MB, greedy {tokens}")


if __name__ == "__main__":
    main()
