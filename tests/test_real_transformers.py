"""The `transformers` samples (samples/real/{bert,distilbert,gpt2,llama,t5_encoder}, written by
samples/make_real_transformers.py: tiny configs, random weights, ``openvino.convert_model`` and
``openvino.save_model`` defaults, so f16-compressed weights and dynamic batch and sequence dims):
they convert, and onnxruntime agrees with OpenVINO and with PyTorch's recorded outputs, on the
recorded inputs (a padding mask included) and on other batch and sequence sizes.

CI has no torch: these tests read only the committed IR files, inputs and outputs.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ir2onnx
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import run_onnx, run_openvino

REAL = Path(__file__).resolve().parents[1] / "samples" / "real"
MODELS = {"bert": ("last_hidden_state", "pooler_output"), "distilbert": ("last_hidden_state",),
          "gpt2": ("last_hidden_state",), "llama": ("last_hidden_state",), "t5_encoder": ("last_hidden_state",)}
TOL = dict(rtol=1e-4, atol=1e-5)


def _feeds(name):
    return {k: np.load(REAL / name / f"{k}.npy") for k in ("input_ids", "attention_mask")}


@pytest.mark.parametrize("name", list(MODELS))
def test_openvino_written_ir(name):
    """The IR is what OpenVINO writes by default: f16 weights, dynamic dims, the mask's BitwiseAnd."""
    xml = REAL / name / "model.xml"
    assert xml.stat().st_size + xml.with_suffix(".bin").stat().st_size < 2_000_000
    graph = ir2onnx.load_ir(xml)
    types = {layer.type for layer in graph.order}
    assert {"BitwiseAnd", "Gather", "ScaledDotProductAttention"} <= types
    text = xml.read_text()
    assert 'element_type="f16"' in text and "<dim>-1</dim>" in text


@pytest.mark.parametrize("name", list(MODELS))
def test_matches_openvino_and_torch(name):
    feeds = _feeds(name)
    assert feeds["attention_mask"].min() == 0  # padding: the mask path is exercised
    got = run_onnx(REAL / name / "model.xml", feeds)
    ov_out = run_openvino(REAL / name / "model.xml", feeds)
    assert len(got) == len(MODELS[name])
    for g, o, key in zip(got, ov_out, MODELS[name]):
        torch_out = np.load(REAL / name / f"torch_{key}.npy")
        assert g.shape == torch_out.shape and g.dtype == np.float32
        np.testing.assert_allclose(g, o, **TOL, err_msg=f"{name}/{key} vs OpenVINO")
        np.testing.assert_allclose(g, torch_out, **TOL, err_msg=f"{name}/{key} vs PyTorch")
        assert np.abs(g).max() > 0.1


@pytest.mark.parametrize("name", list(MODELS))
def test_other_batch_and_sequence(name):
    """Dynamic dims: three rows of 9 tokens, with padding, against OpenVINO."""
    rng = np.random.default_rng(1)
    for batch, seq in ((3, 9),):
        mask = np.ones((batch, seq), np.int64)
        mask[-1, seq // 2:] = 0
        feeds = {"input_ids": rng.integers(1, 64, (batch, seq)), "attention_mask": mask}
        got = run_onnx(REAL / name / "model.xml", feeds)
        for g, o in zip(got, run_openvino(REAL / name / "model.xml", feeds)):
            assert g.shape[:1] == (batch,)
            np.testing.assert_allclose(g, o, **TOL)


@pytest.mark.parametrize("name", list(MODELS))
def test_oracle_interpreter_agrees(name):
    """The oracles run each whole graph and agree with onnxruntime."""
    feeds = _feeds(name)
    got = run_onnx(REAL / name / "model.xml", feeds)
    want = list(evaluate(ir2onnx.load_ir(REAL / name / "model.xml"), feeds).values())
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, **TOL)


def test_cli_converts_and_verifies(tmp_path, capsys):
    """``ir2onnx convert`` with its defaults (an onnxruntime session verifies the file)."""
    from ir2onnx.cli.main import main

    out = tmp_path / "gpt2.onnx"
    assert main(["convert", str(REAL / "gpt2" / "model.xml"), "-o", str(out)]) == 0
    assert out.is_file() and "wrote" in capsys.readouterr().err
