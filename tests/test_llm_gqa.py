"""GroupQueryAttention (issue 32): where an LLM IR's attention matches, ``--genai`` writes
onnxruntime's com.microsoft.GroupQueryAttention with the KV cache written in place; the plain
conversion and the patterns that do not match keep the decomposed attention; ``--genai-provider``.
The IRs are samples/llm/ (samples/make_llm.py); the onnxruntime-genai runs are in test_llm.py."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from ir2onnx.cli import main as cli
from ir2onnx.ir.reader import load_ir
from ir2onnx.llm import interface as llm
from ir2onnx.llm.decode import greedy
from ir2onnx.lowering.convert import convert_graph

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "llm"


def xml(name: str) -> Path:
    return SAMPLES / name / "openvino_model.xml"


def decode(model: onnx.ModelProto, prompt: list[int], steps: int = 16):
    """Greedy tokens and every step's logits of ``model`` on onnxruntime (accuracy level 0)."""
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", "0")
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    tokens, outputs = greedy(sess, llm.interface(model), np.array([prompt], np.int64), steps)
    return tokens[0].tolist(), np.stack([outputs[f"logits@{k}"][0, -1] for k in range(1, steps + 1)])


def converted(name: str, attention: str) -> onnx.ModelProto:
    graph = load_ir(xml(name))
    model = convert_graph(graph, attention=attention).to_model_proto()
    llm.document(graph, model)
    return model


@pytest.mark.parametrize("name, window", [("mistral_fp32", 16), ("gemma2_int4", 128), ("phi3_int4", -1)])
def test_group_query_attention_computes_the_decomposed_attentions_values(name, window):
    """On onnxruntime's CPU kernel, with the cache concatenated (no shared buffer): OpenVINO's
    greedy tokens and logits within 1e-4 of the decomposed form's, over 16 steps that cross the
    Mistral-style sample's sliding window of 16 (8 prompt tokens + 16)."""
    expected = json.loads((SAMPLES / name / "greedy.json").read_text())
    fused = converted(name, "gqa")
    nodes = [n for n in fused.graph.node if n.op_type == "GroupQueryAttention"]
    assert len(nodes) == 2 and not any(n.op_type == "Softmax" for n in fused.graph.node)
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in nodes[0].attribute}
    assert (attrs["num_heads"], attrs["kv_num_heads"]) == (4, 2)
    if name == "gemma2_int4":  # layer 0 slides, layer 1 does not; query_pre_attn_scalar 256
        assert [a.i for n in nodes for a in n.attribute if a.name == "local_window_size"] == [128, -1]
        assert attrs["scale"] == pytest.approx(1 / 16)
    else:
        assert attrs["local_window_size"] == window and attrs["scale"] == pytest.approx(1 / 4)
    tokens, logits = decode(fused, expected["prompt"])
    want_tokens, want_logits = decode(converted(name, "decomposed"), expected["prompt"])
    assert tokens == want_tokens == expected["tokens"]
    assert np.abs(logits - want_logits).max() < 1e-4


def test_the_plain_conversion_keeps_the_decomposed_attention(tmp_path):
    """A plain model's attention_mask may hold zeros anywhere (left padding, a masked token),
    which GroupQueryAttention's sequence lengths cannot say."""
    assert cli.main(["convert", str(xml("llama_fp32")), "-o", str(tmp_path / "m.onnx")]) == 0
    model = onnx.load(tmp_path / "m.onnx")
    assert not any(n.op_type == "GroupQueryAttention" for n in model.graph.node)
    assert {o.domain for o in model.opset_import} == {""}


def _sdpa_ir(tmp_path, causal: bool) -> Path:
    import openvino.opset15 as ops

    from ir2onnx.testing import ov_parameter, ov_save

    q, k, v = (ov_parameter([1, 2, None, 8], name=n) for n in ("q", "k", "v"))
    mask = ov_parameter([1, 1, None, None], name="mask")
    out = ops.scaled_dot_product_attention(q, k, v, *([] if causal else [mask]), causal=causal)
    return ov_save(tmp_path / "sdpa.xml", out, [q, k, v] + ([] if causal else [mask]))


@pytest.mark.parametrize("causal, reason", [(True, "causal SDPA"), (False, "not a KV cache")])
def test_an_attention_that_does_not_match_keeps_the_decomposed_form(tmp_path, causal, reason):
    conv = convert_graph(load_ir(_sdpa_ir(tmp_path, causal)), attention="gqa")
    assert not any(n.op_type == "GroupQueryAttention" for n in conv.model.graph.node)
    assert any(n.op_type == "Softmax" for n in conv.model.graph.node)
    assert len(conv.attention_kept) == 1 and reason in conv.attention_kept[0]


@pytest.mark.parametrize("provider, fused", [("cpu", True), ("webgpu", True), ("cuda", False), ("dml", False)])
def test_genai_provider_writes_its_options_and_the_attention_it_runs(provider, fused, tmp_path, capsys):
    out = tmp_path / "g"
    assert cli.main(["convert", str(xml("qwen2_fp32")), "--genai", str(out), "--genai-provider", provider]) == 0
    err = capsys.readouterr().err
    config = json.loads((out / "genai_config.json").read_text())
    options = config["model"]["decoder"]["session_options"]["provider_options"]
    assert options == ([] if provider == "cpu" else [{provider: {}}])
    model = onnx.load(out / "model.onnx")
    assert any(n.op_type == "GroupQueryAttention" for n in model.graph.node) == fused
    assert config["search"]["past_present_share_buffer"] is fused
    assert ("GroupQueryAttention, the KV cache written in place" in err) == fused
    if not fused:
        assert "takes f16 only" in err


def test_genai_provider_is_for_genai_folders_and_level_0_for_cpu(tmp_path, capsys):
    assert cli.main(["convert", str(xml("llama_fp32")), "-o", str(tmp_path / "m.onnx"), "--genai-provider", "cuda"]) == 2
    assert "--genai-provider applies to --genai folders" in capsys.readouterr().err
    assert cli.main(["convert", str(xml("llama_int4")), "--genai", str(tmp_path / "g"), "--genai-provider", "dml",
                     "--accuracy-level", "0"]) == 2
    assert "optimized for onnxruntime's CPU kernels" in capsys.readouterr().err
    assert not (tmp_path / "g").exists() and not (tmp_path / "m.onnx").exists()
