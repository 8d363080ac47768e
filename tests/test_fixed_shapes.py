"""``convert --shape NAME=DIMS`` / ``shapes=``: input dims fixed at conversion reach every layer, so
the shape subgraphs that OpenVINO writes for dynamic dims fold away (samples written by OpenVINO
with dynamic dims: samples/dynamic, samples/real), the results stay those of the dynamic
conversion, and bad shapes are refused with one line (exit 2, nothing written)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ir2onnx.api import convert
from ir2onnx.cli.main import main
from ir2onnx.errors import Ir2OnnxError
from ir2onnx.testing import run_openvino
from util import node_types

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
REAL = SAMPLES / "real"
SHAPE_OPS = {"Shape", "Size", "ReduceProd", "ConstantOfShape", "Range"}


def _run(model, feeds):
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _dims(vi) -> list:
    return [d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim]


@pytest.mark.parametrize("name", ["swin", "shufflenet"])
def test_dynamic_cnn_folds_and_agrees(name):
    xml = SAMPLES / "dynamic" / name / "model.xml"
    x = np.load(xml.with_name("x.npy"))
    dynamic = convert(xml)
    fixed = convert(xml, shapes={"x": x.shape})
    assert "Shape" in node_types(dynamic)
    assert not SHAPE_OPS & set(node_types(fixed))
    assert len(fixed.graph.node) < len(dynamic.graph.node) // 2
    assert _dims(fixed.graph.input[0]) == list(x.shape)
    assert None not in _dims(fixed.graph.output[0])  # the output port was re-inferred too
    want = _run(dynamic, {"x": x})[0]
    np.testing.assert_array_equal(_run(fixed, {"x": x})[0], want)
    np.testing.assert_allclose(want, run_openvino(xml, {"x": x})[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["bert", "gpt2", "llama"])
def test_transformer_shape_arithmetic_folds(name):
    xml = REAL / name / "model.xml"
    feeds = {k: np.load(REAL / name / f"{k}.npy") for k in ("input_ids", "attention_mask")}
    fixed = convert(xml, shapes={k: v.shape for k, v in feeds.items()})
    types = node_types(fixed)
    assert not {"Shape", "Size", "ReduceProd", "ConstantOfShape"} & set(types)
    assert len(types) < 0.7 * len(node_types(convert(xml)))
    got = _run(fixed, feeds)[0]
    torch_out = np.load(REAL / name / "torch_last_hidden_state.npy")
    assert _dims(fixed.graph.output[0]) == list(torch_out.shape)
    np.testing.assert_allclose(got, torch_out, rtol=1e-4, atol=1e-5)


def test_partial_and_by_layer_name():
    """One input fixed of two; the other keeps its dynamic dims and other sizes still run."""
    xml = REAL / "bert" / "model.xml"
    fixed = convert(xml, shapes={"input_ids": (3, 9)})
    assert _dims(fixed.graph.input[0]) == [3, 9]
    assert _dims(fixed.graph.input[1]) == [None, None]
    ids = np.random.default_rng(0).integers(1, 64, (3, 9))
    mask = np.ones((3, 9), np.int64)
    mask[2, 5:] = 0
    feeds = {"input_ids": ids, "attention_mask": mask}
    np.testing.assert_allclose(_run(fixed, feeds)[0], _run(convert(xml), feeds)[0], rtol=1e-5, atol=1e-6)


def test_static_model_unchanged():
    """Fixing dims an IR already has static gives the same model."""
    xml = REAL / "cnn" / "model.xml"
    assert convert(xml, shapes={"x": (1, 3, 15, 15)}) == convert(xml)


@pytest.mark.parametrize("shape, message", [
    ({"y": (1, 3, 8, 8)}, "the model has no input 'y' (inputs: x)"),
    ({"x": (1, 3, 8)}, "the input has rank 4 ([?,3,?,?]), not 3"),
    ({"x": (1, 4, 8, 8)}, "dim 1 of the input is 3 ([?,3,?,?]), not 4"),
])
def test_bad_shapes_refused(shape, message):
    with pytest.raises(Ir2OnnxError, match=message.replace("[", r"\[").replace("?", r"\?").replace("(", r"\(").replace(")", r"\)")):
        convert(SAMPLES / "dynamic" / "swin" / "model.xml", shapes=shape)


def test_cli_convert_shape(tmp_path, capsys):
    import onnx

    xml = SAMPLES / "dynamic" / "swin" / "model.xml"
    out = tmp_path / "m.onnx"
    assert main(["convert", str(xml), "-o", str(out), "--shape", "x=2,3,14,18"]) == 0
    assert _dims(onnx.load(out).graph.input[0]) == [2, 3, 14, 18]
    for bad, says in (("y=1,3,8,8", "no input 'y'"), ("x=1,3", "rank 4"), ("x", "expected NAME=DIMS"),
                      ("x=1,a", "bad shape")):
        capsys.readouterr()
        assert main(["convert", str(xml), "-o", str(tmp_path / "bad.onnx"), "--shape", bad]) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.strip().splitlines()) == 1
        assert not (tmp_path / "bad.onnx").exists()
