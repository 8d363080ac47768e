"""LLM IRs as LLMs (issue 25): check and run on stateful decoders, the documented KV cache, the
--genai folder. The IRs are optimum-intel exports of tiny random models (samples/make_llm.py),
each with OpenVINO's 16 greedy tokens at exact settings in greedy.json."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from ir2onnx.cli import main as cli
from ir2onnx.llm import genai
from ir2onnx.llm import interface as llm
from ir2onnx.harness.check import check

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "llm"
STATEFUL = ["llama_fp32", "llama_int4", "qwen2_fp32", "qwen2_int4", "gemma2_fp32", "gemma2_int4", "mistral_fp32", "phi3_int4",
            "mixtral_int8"]
ALL = STATEFUL + ["llama_stateless"]


def xml(name: str) -> Path:
    return SAMPLES / name / "openvino_model.xml"


def greedy_json(name: str) -> dict:
    return json.loads((SAMPLES / name / "greedy.json").read_text())


def prompt_file(tmp_path, name: str) -> Path:
    path = tmp_path / "prompt.npy"
    np.save(path, np.array([greedy_json(name)["prompt"]], np.int64))
    return path


def run_tokens(capsys, model, prompt: Path, steps: int = 16) -> list[int]:
    assert cli.main(["run", str(model), "--steps", str(steps), "--input", f"input_ids={prompt}"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("tokens[0]:"))
    return [int(t) for t in line.split(":")[1].split()]


@pytest.mark.parametrize("name", ["llama_fp32", "llama_int4", "mixtral_int8"])
def test_check_passes_on_a_stateful_llm_with_default_options(name):
    result = check(xml(name), isolate_openvino=True)
    assert result.ok, result.failures()
    assert result.backend("openvino").status == "ok"
    steps = {o.name.rsplit("@", 1)[1] for o in result.outputs}
    assert steps == {"1", "2", "3", "4"}  # every step compared
    assert np.array_equal(result.inputs["beam_idx"], [0])
    assert result.inputs["attention_mask"].tolist() == [[1] * 8]
    assert result.inputs["position_ids"].tolist() == [list(range(8))]


def test_check_decode_steps_grow_the_mask_and_count_positions():
    from ir2onnx.ir.reader import load_ir
    from ir2onnx.llm.decode import step_feeds

    graph = load_ir(xml("llama_fp32"))
    steps = step_feeds(graph, {}, {}, {"input_ids": (2, 3)}, 0, 3)
    assert [s["attention_mask"].shape for s in steps] == [(2, 3), (2, 4), (2, 5)]
    assert [s["position_ids"].tolist() for s in steps] == [[[0, 1, 2]] * 2, [[3]] * 2, [[4]] * 2]
    assert all(s["beam_idx"].tolist() == [0, 1] and s["beam_idx"].dtype == np.int32 for s in steps)
    assert all(0 <= s["input_ids"].min() and s["input_ids"].max() < 1000 for s in steps)


def test_check_on_the_explicit_cache_ir():
    result = check(xml("llama_stateless"), isolate_openvino=True)
    assert result.ok, result.failures()
    assert result.inputs["past_key_values.0.key"].shape == (1, 2, 3, 16)
    assert result.inputs["attention_mask"].shape == (1, 11)


@pytest.mark.parametrize("name", ALL)
def test_run_decodes_openvinos_greedy_tokens_from_the_ir(name, tmp_path, capsys):
    assert run_tokens(capsys, xml(name), prompt_file(tmp_path, name)) == greedy_json(name)["tokens"]


def test_run_decodes_a_converted_onnx_and_saves_the_steps(tmp_path, capsys):
    out = tmp_path / "m.onnx"
    assert cli.main(["convert", str(xml("llama_fp32")), "-o", str(out)]) == 0
    capsys.readouterr()
    assert run_tokens(capsys, out, prompt_file(tmp_path, "llama_fp32")) == greedy_json("llama_fp32")["tokens"]
    saved = tmp_path / "s.npz"
    assert cli.main(["run", str(out), "--steps", "3", "--shape", "input_ids=2,4", "--save", str(saved)]) == 0
    data = np.load(saved)
    assert data["tokens"].shape == (2, 3) and data["prompt"].shape == (2, 4)
    assert data["logits@1"].shape == (2, 4, 1000) and data["logits@3"].shape == (2, 1, 1000)
    assert data["past_key_values.0.keypresent.0.key.new@3"].shape == (2, 2, 6, 16)


def test_run_refuses_zero_steps(capsys):
    assert cli.main(["run", str(xml("llama_fp32")), "--steps", "0"]) == 2
    assert "--steps must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["llama_fp32", "llama_stateless"])
def test_the_plain_conversion_documents_its_state(name, tmp_path):
    out = tmp_path / "m.onnx"
    assert cli.main(["convert", str(xml(name)), "-o", str(out)]) == 0
    model = onnx.load(out)
    inputs = {i.name: i for i in model.graph.input}
    meta = {p.key: json.loads(p.value) for p in model.metadata_props if p.key.startswith(llm.META_PREFIX)}
    state = [n for n in inputs if n.startswith("past_key_values")]
    assert len(state) == 4 and sorted(meta) == sorted(llm.META_PREFIX + n for n in state)
    batch = inputs["input_ids"].type.tensor_type.shape.dim[0].dim_param
    for n in state:
        m = meta[llm.META_PREFIX + n]
        assert m["sequence_axis"] == 2 and m["batch_axis"] == 0
        assert m["initial_shape"] == [batch, 2, 0, 16]
        assert inputs[n].type.tensor_type.shape.dim[0].dim_param == batch
        assert m["output"] in {o.name for o in model.graph.output}
    assert ("beam_idx" in inputs) == (name == "llama_fp32")  # kept in the plain conversion


@pytest.mark.parametrize("name, level", [("llama_fp32", None), ("gemma2_int4", "0"), ("qwen2_int4", None),
                                         ("llama_stateless", None)])
def test_the_genai_folder(name, level, tmp_path, capsys):
    out = tmp_path / "g"
    assert cli.main(["convert", str(xml(name)), "--genai", str(out)] + (["--accuracy-level", level] if level else [])) == 0
    assert {"genai_config.json", "model.onnx", "tokenizer.json", "tokenizer_config.json"} <= {
        p.name for p in out.iterdir()}
    model = onnx.load(out / "model.onnx")
    ins, outs = [i.name for i in model.graph.input], [o.name for o in model.graph.output]
    assert ins[:3] == ["input_ids", "attention_mask", "position_ids"]
    assert sorted(ins[3:]) == [f"past_key_values.{n}" for n in ("0.key", "0.value", "1.key", "1.value")]
    assert "beam_idx" not in ins and not any("beam_idx" in n.input for n in model.graph.node)
    assert outs[0] == "logits" and sorted(outs[1:]) == [f"present.{n}" for n in ("0.key", "0.value", "1.key", "1.value")]
    fused = [n for n in model.graph.node if n.op_type == "MatMulNBits"]  # genai cannot set the
    if level == "0":  # session's accuracy level: the folder holds the fused nodes, at level 0
        assert fused and all(onnx.helper.get_attribute_value(a) == 0 for n in fused
                             for a in n.attribute if a.name == "accuracy_level")
    else:  # onnxruntime's default level: standard DequantizeLinear -> MatMul, fused by genai's session
        assert not fused
        assert any(n.op_type == "DequantizeLinear" for n in model.graph.node) == ("int4" in name)
    config = json.loads((out / "genai_config.json").read_text())
    hf = json.loads((SAMPLES / name / "config.json").read_text())
    m, d = config["model"], config["model"]["decoder"]
    assert (d["num_hidden_layers"], d["num_key_value_heads"], d["head_size"], m["vocab_size"]) == (2, 2, 16, 1000)
    assert (m["bos_token_id"], m["eos_token_id"], m["type"]) == (1, 2, hf["model_type"])
    assert d["inputs"]["past_key_names"] == "past_key_values.%d.key"
    assert d["outputs"]["present_value_names"] == "present.%d.value"
    gqa = [n for n in model.graph.node if n.op_type == "GroupQueryAttention"]
    assert len(gqa) == 2 and all(n.domain == "com.microsoft" for n in gqa)  # one per layer, the cache in place
    assert config["search"]["past_present_share_buffer"] is True
    assert d["session_options"]["provider_options"] == []  # cpu
    capsys.readouterr()  # the folder's model decodes on plain onnxruntime too, with genai's names
    assert run_tokens(capsys, out / "model.onnx", prompt_file(tmp_path, name)) == greedy_json(name)["tokens"]


def test_genai_names_from_variable_ids_or_order():
    names = genai.genai_names(["past_key_values.1.valuepresent.1.value", "past_key_values.0.keypresent.0.key"])
    assert names == {"past_key_values.1.valuepresent.1.value": (1, "value"),
                     "past_key_values.0.keypresent.0.key": (0, "key")}
    assert genai.genai_names(["a", "b", "c", "d"]) == {"a": (0, "key"), "b": (0, "value"),
                                                       "c": (1, "key"), "d": (1, "value")}


def test_genai_refuses_what_is_not_an_llm(tmp_path, capsys):
    import openvino.opset15 as ops

    from ir2onnx.testing import ov_parameter, ov_save

    x = ov_parameter([1, 3])
    path = ov_save(tmp_path / "m.xml", ops.relu(x), [x])
    assert cli.main(["convert", str(path), "--genai", str(tmp_path / "g")]) == 2
    assert "--genai needs an LLM IR" in capsys.readouterr().err
    assert not (tmp_path / "g").exists()
    assert cli.main(["convert", str(xml("llama_fp32")), "--genai", str(tmp_path / "g"), "-o", "x.onnx"]) == 2
    assert "not both" in capsys.readouterr().err


def test_an_optimum_intel_folder_with_its_tokenizer_irs_stands_for_its_model(tmp_path, capsys):
    """optimum-cli writes openvino_tokenizer.xml and openvino_detokenizer.xml beside the model
    (string ops ONNX has none of): the folder given as the model is openvino_model.xml, for
    --genai, -o and run alike, and the tokenizer IRs are not read."""
    import shutil

    folder = tmp_path / "ov"
    shutil.copytree(SAMPLES / "llama_fp32", folder)
    for name in ("openvino_tokenizer.xml", "openvino_detokenizer.xml"):
        (folder / name).write_text("<net name='tokenizer' version='11'><layers><layer id='0' "
                                   "type='StringTensorUnpack' version='opset15'")  # not even XML
    assert cli.main(["convert", str(folder), "--genai", str(tmp_path / "g")]) == 0
    assert (tmp_path / "g" / "model.onnx").is_file()
    assert cli.main(["convert", str(folder), "-o", str(tmp_path / "m.onnx"), "-q"]) == 0
    assert (tmp_path / "m.onnx").is_file()
    capsys.readouterr()
    assert run_tokens(capsys, folder, prompt_file(tmp_path, "llama_fp32"), 4) == greedy_json("llama_fp32")["tokens"][:4]


@pytest.mark.parametrize("name", STATEFUL + ["llama_stateless"])
def test_onnxruntime_genai_generates_openvinos_greedy_tokens(name, tmp_path):
    og = pytest.importorskip("onnxruntime_genai", reason="onnxruntime-genai is not installed "
                             "(an optional extra: pip install 'ir2onnx[genai]')")
    assert cli.main(["convert", str(xml(name)), "--genai", str(tmp_path / "g"), "--accuracy-level", "0"]) == 0
    config = json.loads((tmp_path / "g" / "genai_config.json").read_text())
    nodes = onnx.load(tmp_path / "g" / "model.onnx").graph.node
    assert sum(n.op_type == "GroupQueryAttention" for n in nodes) == 2  # genai writes the cache in place
    assert config["search"]["past_present_share_buffer"] is True
    expected = greedy_json(name)
    model = og.Model(str(tmp_path / "g"))
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=len(expected["prompt"]) + 16)
    gen = og.Generator(model, params)
    gen.append_tokens(np.array([expected["prompt"]], np.int32))
    tokens = []
    while not gen.is_done() and len(tokens) < 16:
        gen.generate_next_token()
        tokens.append(int(gen.get_next_tokens()[0]))
    assert tokens == expected["tokens"]


@pytest.mark.parametrize("name", ["llama_int4", "mixtral_int8"])
def test_onnxruntime_genai_at_the_default_level_decodes_as_onnxruntime_does(name, tmp_path):
    """The default folder (accuracy level 4, int8 activations): genai's greedy tokens are those of
    a plain onnxruntime session at level 4 on the same model.onnx."""
    og = pytest.importorskip("onnxruntime_genai", reason="onnxruntime-genai is not installed "
                             "(an optional extra: pip install 'ir2onnx[genai]')")
    import onnxruntime as ort

    from ir2onnx.llm.decode import greedy

    assert cli.main(["convert", str(xml(name)), "--genai", str(tmp_path / "g")]) == 0
    prompt = greedy_json(name)["prompt"]
    model = og.Model(str(tmp_path / "g"))
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=len(prompt) + 16)
    gen = og.Generator(model, params)
    gen.append_tokens(np.array([prompt], np.int32))
    tokens = []
    while not gen.is_done() and len(tokens) < 16:
        gen.generate_next_token()
        tokens.append(int(gen.get_next_tokens()[0]))
    opts = ort.SessionOptions()
    opts.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", "4")
    sess = ort.InferenceSession(str(tmp_path / "g" / "model.onnx"), opts, providers=["CPUExecutionProvider"])
    iface = llm.interface(onnx.load(str(tmp_path / "g" / "model.onnx"), load_external_data=False))
    want, _ = greedy(sess, iface, np.array([prompt], np.int64), 16)
    assert tokens == want[0].tolist()


def test_accuracy_level_is_for_genai_folders(tmp_path, capsys):
    assert cli.main(["convert", str(xml("llama_int4")), "-o", str(tmp_path / "m.onnx"), "--accuracy-level", "0"]) == 2
    assert "--accuracy-level applies to --genai folders" in capsys.readouterr().err
    assert not (tmp_path / "m.onnx").exists()


def _reorder_ifs(model, states) -> dict:
    """state input -> the If that reads it: then-branch Concat(state, new), else-branch
    Concat(Gather(state, beam_idx), new) (ops/_state_reorder.py)."""
    from ir2onnx.ops._state_reorder import REORDER_IF

    found = {}
    for node in model.graph.node:
        if node.op_type == "If" and node.doc_string == REORDER_IF:
            branches = {a.name: list(a.g.node) for a in node.attribute}
            (then,) = branches["then_branch"]
            gather, concat = branches["else_branch"]
            assert then.op_type == concat.op_type == "Concat" and gather.op_type == "Gather"
            assert gather.input[1] == "beam_idx" and gather.input[0] == then.input[0] and concat.input[0] == gather.output[0]
            found[then.input[0]] = node
    assert set(found) == set(states), (set(found), states)
    return found


def test_the_cache_reorder_is_skipped_when_it_reorders_nothing(tmp_path):
    """Gather(state, beam_idx, axis 0) then Concat -> an If: the Concat of the state as it is where
    beam_idx is arange(batch), else of the ONNX Gather (negative indices count from the end; an
    index out of range raises in onnxruntime as in the framework's index_select, where OpenVINO's
    runtime zeroes the row: docs/deviations.md). beam_idx arange over fewer rows than the cache
    holds takes the Gather. ``--target onnx`` keeps the plain Gather."""
    import onnxruntime as ort

    model = cli_convert(xml("llama_fp32"), tmp_path)
    states = {c.input for c in llm.interface(model).caches}
    _reorder_ifs(model, states)
    assert not [n for n in model.graph.node if n.op_type in ("Gather", "Where") and n.input[0] in states]
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(7)
    cache = {s: rng.standard_normal((2, 2, 3, 16)).astype(np.float32) for s in states}
    feeds = {"input_ids": np.array([[5], [6]]), "attention_mask": np.ones((2, 4), np.int64),
             "position_ids": np.array([[3], [3]]), **cache}
    names = [o.name for o in sess.get_outputs()]
    for beams in ([0, 1], [1, 0], [-1, 0], [1, 1], [0, -1]):
        got = dict(zip(names, sess.run(None, {**feeds, "beam_idx": np.array(beams, np.int32)})))
        for s in states:
            np.testing.assert_array_equal(got[s + ".new"][:, :, :3], cache[s][np.array(beams) % 2])
    one = {**feeds, "input_ids": np.array([[5]]), "attention_mask": np.ones((1, 4), np.int64),
           "position_ids": np.array([[3]]), "beam_idx": np.array([0], np.int32)}
    got = dict(zip(names, sess.run(None, one)))  # arange(1) of a 2-row cache: its first row
    for s in states:
        np.testing.assert_array_equal(got[s + ".new"][:, :, :3], cache[s][:1])
    with pytest.raises(Exception, match="out of bounds|out of range|indices"):
        sess.run(None, {**feeds, "beam_idx": np.array([2, 0], np.int32)})
    assert cli.main(["convert", str(xml("llama_fp32")), "-o", str(tmp_path / "s.onnx"), "-q", "--target", "onnx"]) == 0
    standard = onnx.load(tmp_path / "s.onnx")
    gathers = [n for n in standard.graph.node if n.op_type == "Gather" and n.input[0] in states]
    assert len(gathers) == len(states) and all(n.input[1] == "beam_idx" for n in gathers)
    assert not [n for n in standard.graph.node if n.op_type == "If"]


def cli_convert(path, tmp_path):
    assert cli.main(["convert", str(path), "-o", str(tmp_path / "m.onnx"), "-q"]) == 0
    return onnx.load(tmp_path / "m.onnx")


def test_the_new_cache_is_written_by_its_concat(tmp_path):
    """onnxruntime copies a tensor for an Identity into a graph output, and an outer tensor that
    an If's branch gives back: each `<variable>.new` is the output of the reorder If, whose
    branches both end in the Concat that appends the step's key or value, with no Identity."""
    model = cli_convert(xml("llama_int4"), tmp_path)
    states = {c.input for c in llm.interface(model).caches}
    ifs = _reorder_ifs(model, states)
    news = {s: s + ".new" for s in states}
    assert all(ifs[s].output[0] == news[s] for s in states), {s: ifs[s].output[0] for s in states}
    for node in ifs.values():
        for a in node.attribute:
            assert a.g.output[0].name == a.g.node[-1].output[0] and a.g.node[-1].op_type == "Concat"
