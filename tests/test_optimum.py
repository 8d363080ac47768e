"""``convert OV_DIR --optimum OUT_DIR``: optimum-intel folders as the folders optimum-onnx's
ORTModelFor* classes load (issue 32). The IRs are optimum-intel exports of tiny random models
(samples/make_llm.py, samples/make_whisper.py, samples/make_embedding.py); greedy.json holds
OpenVINO's greedy tokens at exact settings. The layout tests drive the written files on plain
onnxruntime by optimum's convention; the ORTModelFor* tests need the ``optimum`` extra, which CI
installs (.ci/run)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from ir2onnx.cli import main as cli

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
WHISPER, EMBEDDING, LLM = SAMPLES / "whisper", SAMPLES / "embedding", SAMPLES / "llm"
EXACT = {"INFERENCE_PRECISION_HINT": "f32"}


def _greedy(folder: Path) -> dict:
    return json.loads((folder / "greedy.json").read_text())


def _features(seed: int) -> np.ndarray:  # samples/make_whisper.py: features()
    return np.random.default_rng(seed).standard_normal((1, 80, 3000)).astype(np.float32)


def _convert(src: Path, out: Path) -> Path:
    assert cli.main(["convert", str(src), "--optimum", str(out)]) == 0
    return out


def _names(path: Path) -> tuple[list[str], list[str]]:
    m = onnx.load(str(path), load_external_data=False)
    return [i.name for i in m.graph.input], [o.name for o in m.graph.output]


def _session(path: Path):
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


@pytest.fixture(scope="module")
def optimum_onnx():
    os.environ["HF_HUB_OFFLINE"] = "1"  # the folders are local; nothing is fetched
    return pytest.importorskip("optimum.onnxruntime", reason="optimum-onnx is not installed (an "
                               "optional extra: pip install 'ir2onnx[optimum]'; CI installs it)")


# -- the files, driven on plain onnxruntime -------------------------------------------------------
@pytest.mark.parametrize("name", ["llama_fp32", "llama_stateless"])
def test_a_causal_lm_folder_has_optimums_names_and_decodes_openvinos_tokens(name, tmp_path):
    out = _convert(LLM / name, tmp_path / "o")
    assert {"model.onnx", "config.json", "generation_config.json", "tokenizer.json"} <= {
        f.name for f in out.iterdir()}
    inputs, outputs = _names(out / "model.onnx")
    assert inputs == ["input_ids", "attention_mask", "position_ids", "past_key_values.0.key",
                      "past_key_values.0.value", "past_key_values.1.key", "past_key_values.1.value"]
    assert outputs == ["logits", "present.0.key", "present.0.value", "present.1.key", "present.1.value"]
    expected = _greedy(LLM / name)
    sess = _session(out / "model.onnx")
    ids = np.array([expected["prompt"]], np.int64)
    past = {n: np.zeros((1, 2, 0, 16), np.float32) for n in inputs if n.startswith("past")}
    tokens, seen = [], 0
    for _ in range(16):  # optimum's loop: the mask over every token, positions counted on
        n = ids.shape[1]
        got = sess.run(None, {"input_ids": ids, "attention_mask": np.ones((1, seen + n), np.int64),
                              "position_ids": np.arange(seen, seen + n, dtype=np.int64)[None], **past})
        past = {i: v for i, v in zip(inputs[3:], got[1:])}
        seen += n
        ids = np.argmax(got[0][:, -1], axis=-1)[:, None]
        tokens.append(int(ids[0, 0]))
    assert tokens == expected["tokens"]


def test_a_grouped_query_model_type_optimum_sizes_by_attention_heads_reads_a_sliced_cache(tmp_path, capsys):
    """optimum-onnx 0.1 feeds a gemma2 (or mixtral) model's first step an empty cache of
    num_attention_heads (4) heads; the model slices its cache inputs to its 2 KV heads."""
    out = _convert(LLM / "gemma2_fp32", tmp_path / "o")
    assert "sliced to the model's 2 KV heads" in capsys.readouterr().err
    sess = _session(out / "model.onnx")
    past = {i.name: np.zeros((1, 4, 0, 16), np.float32) for i in sess.get_inputs() if i.name.startswith("past")}
    ids = np.array([[1, 17, 42]], np.int64)
    got = dict(zip([o.name for o in sess.get_outputs()],
                   sess.run(None, {"input_ids": ids, "attention_mask": np.ones((1, 3), np.int64),
                                   "position_ids": np.arange(3)[None], **past})))
    assert got["present.1.value"].shape == (1, 2, 3, 16)
    _convert(LLM / "llama_fp32", tmp_path / "l")  # a type optimum sizes by its KV heads: no slice
    assert "sliced" not in capsys.readouterr().err


def _whisper_tokens(folder: Path, features: np.ndarray, steps: int, start: int) -> list[int]:
    """optimum's encoder-decoder loop on the merged decoder: the encoder once; the first step on
    the start token with use_cache_branch False and an empty cache; every next step with
    use_cache_branch True, fed the self-attention cache of the step before and the
    cross-attention cache of the first step."""
    hidden = _session(folder / "encoder_model.onnx").run(None, {"input_features": features})[0]
    dec = _session(folder / "decoder_model_merged.onnx")
    names = [o.name for o in dec.get_outputs()]
    cache = {i.name: np.zeros((1, 4, 0, 16), np.float32) for i in dec.get_inputs() if i.name.startswith("past")}
    tokens = [start]
    for k in range(steps):
        got = dict(zip(names, dec.run(None, {"input_ids": np.array([[tokens[-1]]], np.int64),
                                              "encoder_hidden_states": hidden, **cache,
                                              "use_cache_branch": np.array([k > 0])})))
        cache.update({n.replace("present.", "past_key_values."): v for n, v in got.items()
                      if n != "logits" and (k == 0 or ".decoder." in n)})
        tokens.append(int(np.argmax(got["logits"][0, -1])))
    return tokens[1:]


KV = [f"present.{i}.{part}.{kind}" for i in (0, 1) for part in ("decoder", "encoder") for kind in ("key", "value")]


def test_a_whisper_folder_has_optimums_merged_decoder_and_decodes_openvinos_tokens(tmp_path):
    out = _convert(WHISPER, tmp_path / "o")
    files = {f.name for f in out.iterdir()}
    assert {"encoder_model.onnx", "decoder_model_merged.onnx", "config.json", "generation_config.json",
            "preprocessor_config.json"} <= files
    assert not files & {"decoder_model.onnx", "decoder_with_past_model.onnx"}  # the weights once
    assert _names(out / "encoder_model.onnx") == (["input_features"], ["last_hidden_state"])
    inputs, outputs = _names(out / "decoder_model_merged.onnx")
    assert inputs == ["input_ids", "encoder_hidden_states"] + [k.replace("present", "past_key_values") for k in KV] + [
        "use_cache_branch"]
    assert outputs == ["logits"] + KV
    merged = onnx.load(str(out / "decoder_model_merged.onnx"))
    assert [n.op_type for n in merged.graph.node] == ["If"]
    expected = _greedy(WHISPER)
    tokens = _whisper_tokens(out, _features(expected["feature_seed"]), len(expected["tokens"]), expected["start"])
    assert tokens == expected["tokens"]


def test_the_first_step_computes_the_cross_attention_cache_from_the_encoder(tmp_path):
    """use_cache_branch False: present.N.encoder.* are the keys and values of
    encoder_hidden_states (a function of it), the self-attention cache one token long; True: the
    cross-attention cache fed is passed through."""
    out = _convert(WHISPER, tmp_path / "o")
    sess = _session(out / "decoder_model_merged.onnx")
    names = [o.name for o in sess.get_outputs()]
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((1, 1500, 64)).astype(np.float32) for _ in range(2))
    empty = {i.name: np.zeros((1, 4, 0, 16), np.float32) for i in sess.get_inputs() if i.name.startswith("past")}

    def step(hidden, cache, use_cache):
        return dict(zip(names, sess.run(None, {"input_ids": np.array([[1]], np.int64), "encoder_hidden_states": hidden,
                                               **cache, "use_cache_branch": np.array([use_cache])})))

    got_a, got_b = step(a, empty, False), step(b, empty, False)
    assert got_a["present.0.encoder.key"].shape == (1, 4, 1500, 16)
    assert got_a["present.1.decoder.value"].shape == (1, 4, 1, 16)
    assert not np.allclose(got_a["present.1.encoder.value"], got_b["present.1.encoder.value"])
    cache = {n.replace("present.", "past_key_values."): v for n, v in got_a.items() if n != "logits"}
    later = step(b, cache, True)  # the first step's cross cache, whatever encoder_hidden_states says
    np.testing.assert_array_equal(later["present.1.encoder.value"], got_a["present.1.encoder.value"])
    assert later["present.1.decoder.value"].shape == (1, 4, 2, 16)


def test_an_embedding_folder_is_the_plain_conversion(tmp_path):
    out = _convert(EMBEDDING, tmp_path / "o")
    assert {"model.onnx", "config.json", "tokenizer.json"} <= {f.name for f in out.iterdir()}
    assert _names(out / "model.onnx") == (["input_ids", "attention_mask", "token_type_ids"], ["last_hidden_state"])


def test_optimum_refuses_what_is_not_an_optimum_intel_folder(tmp_path, capsys):
    assert cli.main(["convert", str(SAMPLES / "decoder"), "--optimum", str(tmp_path / "o")]) == 2
    assert "has neither openvino_model.xml nor" in capsys.readouterr().err
    assert cli.main(["convert", str(WHISPER), "--optimum", str(tmp_path / "o"), "-o", "x.onnx"]) == 2
    assert "-o cannot go with it" in capsys.readouterr().err
    assert cli.main(["convert", str(tmp_path / "none"), "--optimum", str(tmp_path / "o")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no temporary folder left either


# -- optimum-onnx itself (slow: importing optimum and torch takes 10-20 s; CI runs them) ----------
@pytest.mark.slow
@pytest.mark.parametrize("name, exact", [("llama_fp32", False), ("llama_int4", False), ("qwen2_int4", True),
                                         ("gemma2_fp32", False), ("mixtral_int8", True)])
def test_ort_model_for_causal_lm_generates_openvinos_greedy_tokens(name, exact, tmp_path, optimum_onnx):
    """exact: onnxruntime's MatMulNBits at accuracy level 0 (its default 4 quantizes the
    activations, and these two samples then part from OpenVINO's exact tokens at the 9th-10th)."""
    import torch

    out = _convert(LLM / name, tmp_path / "o")
    options = None
    if exact:
        options = ort.SessionOptions()
        options.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", "0")
    model = optimum_onnx.ORTModelForCausalLM.from_pretrained(out, session_options=options)
    expected = _greedy(LLM / name)
    ids = torch.tensor([expected["prompt"]])
    got = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                         max_new_tokens=16, min_new_tokens=16)
    assert got[0, ids.shape[1]:].tolist() == expected["tokens"]


@pytest.mark.slow
def test_ort_model_for_feature_extraction_gives_openvinos_embeddings(tmp_path, optimum_onnx):
    import openvino as ov
    import torch

    out = _convert(EMBEDDING, tmp_path / "o")
    model = optimum_onnx.ORTModelForFeatureExtraction.from_pretrained(out)
    ids = np.array([[2, 17, 42, 9, 77, 3], [2, 55, 3, 0, 0, 0]], np.int64)  # the second row padded
    mask = (np.arange(6) < np.array([[6], [3]])).astype(np.int64)
    got = model(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask)).last_hidden_state.numpy()
    compiled = ov.Core().compile_model(str(EMBEDDING / "openvino_model.xml"), "CPU", EXACT)
    want = compiled({"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
    want = np.asarray(want["last_hidden_state"])
    assert got.shape == want.shape == (2, 6, 32)
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=0)


@pytest.mark.slow
def test_ort_model_for_speech_seq2seq_generates_openvinos_greedy_tokens(tmp_path, optimum_onnx):
    import torch

    out = _convert(WHISPER, tmp_path / "o")
    model = optimum_onnx.ORTModelForSpeechSeq2Seq.from_pretrained(out)
    assert model.decoder.is_merged and model.can_use_cache  # the merged decoder, the cache used
    expected = _greedy(WHISPER)
    features = torch.tensor(_features(expected["feature_seed"]))
    n = len(expected["tokens"])
    got = model.generate(features, max_new_tokens=n, min_new_tokens=n, do_sample=False)
    assert got[0, -n:].tolist() == expected["tokens"]


@pytest.mark.parametrize("converted", [False, True])
def test_run_decodes_a_whisper_folder_greedily(converted, tmp_path, capsys):
    """`ir2onnx run FOLDER --steps N`: the optimum-intel IR folder (converted on the fly) or the
    --optimum folder, from config.json's decoder_start_token_id: OpenVINO's greedy tokens."""
    folder = _convert(WHISPER, tmp_path / "o") if converted else WHISPER
    expected = _greedy(WHISPER)
    np.save(tmp_path / "f.npy", _features(expected["feature_seed"]))
    capsys.readouterr()
    assert cli.main(["run", str(folder), "--steps", str(len(expected["tokens"])),
                     "--input", f"input_features={tmp_path / 'f.npy'}", "--save", str(tmp_path / "t.npz")]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("tokens[0]:"))
    assert [int(t) for t in line.split(":")[1].split()] == expected["tokens"]
    assert np.load(tmp_path / "t.npz")["tokens"].tolist() == [expected["tokens"]]
    assert cli.main(["run", str(folder), "--input", f"nope={tmp_path / 'f.npy'}"]) == 2
    assert "the encoder has no input 'nope'" in capsys.readouterr().err


# -- onnxruntime-genai's whisper folder (--genai on a Whisper IR folder) --------------------------
def test_a_whisper_genai_folder_has_genais_names_and_decodes_openvinos_tokens(tmp_path):
    out = tmp_path / "g"
    assert cli.main(["convert", str(WHISPER), "--genai", str(out)]) == 0
    assert {f.name for f in out.iterdir()} == {"encoder.onnx", "decoder.onnx", "genai_config.json",
                                               "tokenizer.json", "tokenizer_config.json"}
    cross = [f"present_{kind}_cross_{i}" for i in (0, 1) for kind in ("key", "value")]
    assert _names(out / "encoder.onnx") == (["audio_features"], ["encoder_hidden_states"] + cross)
    inputs, outputs = _names(out / "decoder.onnx")
    assert inputs == ["input_ids"] + [f"past_{kind}_{part}_{i}" for i in (0, 1) for part in ("self", "cross")
                                      for kind in ("key", "value")]
    assert outputs == ["logits"] + [f"present_{kind}_self_{i}" for i in (0, 1) for kind in ("key", "value")]
    config = json.loads((out / "genai_config.json").read_text())["model"]
    assert (config["type"], config["vocab_size"], config["decoder"]["num_hidden_layers"],
            config["decoder"]["head_size"], config["encoder"]["num_attention_heads"]) == ("whisper", 100, 2, 16, 4)
    expected = _greedy(WHISPER)  # genai's loop: the encoder once, then the decoder from an empty self cache
    enc = _session(out / "encoder.onnx")
    got = dict(zip([o.name for o in enc.get_outputs()],
                   enc.run(None, {"audio_features": _features(expected["feature_seed"])})))
    cache = {n.replace("present_", "past_"): v for n, v in got.items() if "cross" in n}
    cache.update({f"past_{k}_self_{i}": np.zeros((1, 4, 0, 16), np.float32) for i in (0, 1) for k in ("key", "value")})
    dec, tokens = _session(out / "decoder.onnx"), [expected["start"]]
    names = [o.name for o in dec.get_outputs()]
    for _ in expected["tokens"]:
        step = dict(zip(names, dec.run(None, {"input_ids": np.array([[tokens[-1]]], np.int64), **cache})))
        cache.update({n.replace("present_", "past_"): v for n, v in step.items() if n != "logits"})
        tokens.append(int(np.argmax(step["logits"][0, -1])))
    assert tokens[1:] == expected["tokens"]


def test_onnxruntime_genai_runs_the_whisper_folder_with_openvinos_tokens(tmp_path):
    og = pytest.importorskip("onnxruntime_genai", reason="onnxruntime-genai is not installed "
                             "(an optional extra: pip install 'ir2onnx[genai]')")
    assert cli.main(["convert", str(WHISPER), "--genai", str(tmp_path / "g")]) == 0
    expected = _greedy(WHISPER)
    model = og.Model(str(tmp_path / "g"))
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=1 + len(expected["tokens"]))
    gen = og.Generator(model, params)
    inputs = og.NamedTensors()
    inputs["audio_features"] = _features(expected["feature_seed"])
    gen.set_inputs(inputs)
    gen.append_tokens(np.array([[expected["start"]]], np.int32))
    tokens = []
    while not gen.is_done():
        gen.generate_next_token()
        tokens.append(int(gen.get_next_tokens()[0]))
    assert tokens == expected["tokens"]


def test_check_passes_on_the_whisper_decoder_ir():
    """The stateful decoder (ReadValue-6 variable_type 'dynamic', variable_shape '...', the
    cross-attention variables' init computed from encoder_hidden_states): four decode steps
    agree on onnxruntime, the oracle and OpenVINO, the cross-attention cache kept unchanged."""
    from ir2onnx.harness.check import check

    result = check(WHISPER / "openvino_decoder_model.xml", isolate_openvino=True)
    assert result.ok, result.failures()
    assert result.backend("openvino").status == "ok"
    ort_out = result.backend("ort:cpu").outputs
    assert {f"logits@{k}" for k in range(1, 5)} <= set(ort_out)
    cross = [n for n in ort_out if n.endswith(".new@1") and not n.startswith("past_key_values")]
    assert len(cross) == 4  # two layers' cross-attention keys and values
    for name in cross:
        np.testing.assert_array_equal(ort_out[name], ort_out[name.replace("@1", "@4")])
    assert ort_out["past_key_values.0.decoder.keypresent.0.decoder.key.new@4"].shape[2] == \
        ort_out["past_key_values.0.decoder.keypresent.0.decoder.key.new@1"].shape[2] + 3
