"""The Python API and the names of a converted model (issue 23): ir2onnx.convert of an in-memory
openvino.Model, ir2onnx.run, rename= / --rename, and the summary convert prints."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.cli.main import main
from ir2onnx.errors import Ir2OnnxError
from ir2onnx.testing import ov_parameter, ov_save
from util import convert_model

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "real"


def _ov_model():
    """x (f32 [?, 3]) -> x * w + 1, w an f32 constant that f16 would round."""
    x = ov_parameter([None, 3], np.float32, "x")
    w = ops.constant(np.array([1.0001, 2.0, 3.0], np.float32))
    y = ops.add(ops.multiply(x, w), ops.constant(np.float32(1)))
    y.output(0).get_tensor().set_names({"y"})
    return ov.Model([ops.result(y)], [x], "affine")


def test_convert_an_in_memory_openvino_model(tmp_path):
    model = ir2onnx.convert(_ov_model())
    assert [i.name for i in model.graph.input] == ["x"] and [o.name for o in model.graph.output] == ["y"]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = ir2onnx.run(model, {"x": x})
    np.testing.assert_array_equal(out["y"], x * np.array([1.0001, 2, 3], np.float32) + 1)  # f32 kept
    path = ir2onnx.convert_file(_ov_model(), tmp_path / "a.onnx", rename={"y": "out"})
    assert [o.name for o in onnx.load(path).graph.output] == ["out"]
    with pytest.raises(TypeError, match="needs an output path"):
        ir2onnx.convert_file(_ov_model())


def test_an_in_memory_model_is_checked_with_openvino_too():
    result = ir2onnx.check(_ov_model(), shapes={"x": (2, 3)})
    assert result.ok, result.failures()
    assert {b.name for b in result.backends if b.status == "ok"} == {"ort:cpu", "oracle", "openvino"}


def test_convert_refuses_what_is_not_a_model():
    with pytest.raises(TypeError, match="openvino.Model"):
        ir2onnx.convert(42)


def test_run_takes_paths_and_returns_outputs_by_name(tmp_path):
    xml = convert_model(tmp_path / "m.xml")
    x = np.arange(6, dtype=np.float16).reshape(2, 3)
    out = ir2onnx.run(xml, {"x": x})
    assert list(out) == ["y", "w"]
    np.testing.assert_array_equal(out["y"], x.astype(np.float32))
    onnx_path = ir2onnx.convert_file(xml)
    np.testing.assert_array_equal(ir2onnx.run(onnx_path, {"x": x})["y"], out["y"])
    assert ir2onnx.run(onnx_path, shapes={"x": (4, 3)})["y"].shape == (4, 3)
    with pytest.raises(Ir2OnnxError, match="not found"):
        ir2onnx.run(tmp_path / "missing.onnx")
    assert "run" in ir2onnx.__all__


# -- rename ---------------------------------------------------------------------------------------
def test_rename_inputs_and_outputs(capsys, tmp_path):
    xml = convert_model(tmp_path / "m.xml")
    out = tmp_path / "r.onnx"
    assert main(["convert", str(xml), "-o", str(out), "--rename", "x=pixels", "--rename", "y=probs"]) == 0
    model = onnx.load(out)
    assert [i.name for i in model.graph.input] == ["pixels"]
    assert [o.name for o in model.graph.output] == ["probs", "w"]
    onnx.checker.check_model(model, full_check=True)
    x = np.ones((1, 3), np.float16)
    np.testing.assert_array_equal(ir2onnx.run(out, {"pixels": x})["probs"], x.astype(np.float32))


def test_rename_can_swap_names(tmp_path):
    xml = convert_model(tmp_path / "m.xml")
    model = ir2onnx.convert(xml, rename={"y": "w", "w": "y"})
    assert [o.name for o in model.graph.output] == ["w", "y"]
    out = ir2onnx.run(model, {"x": np.full((1, 3), 7, np.float16)})
    np.testing.assert_array_equal(out["w"], np.full((1, 3), 7, np.float32))


@pytest.mark.parametrize("args,message", [
    (["--rename", "nope=a"], "has no input or output 'nope'"),
    (["--rename", "y=w"], "'w' is already a name in the model"),
    (["--rename", "y=z", "--rename", "w=z"], "two names would both become 'z'"),
    (["--rename", "y"], "expected OLD=NEW"),
    (["--rename", "y=a", "--rename", "y=b"], "'y' is renamed twice"),
])
def test_bad_renames_exit_2_and_write_nothing(capsys, tmp_path, args, message):
    xml = convert_model(tmp_path / "m.xml")
    out = tmp_path / "r.onnx"
    assert main(["convert", str(xml), "-o", str(out), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err
    assert not out.exists()


def test_rename_reaches_into_bodies():
    """The If bodies of the torch sample read the outer input: their references are renamed too."""
    xml = SAMPLES.parent / "torch_if" / "torch_if.xml"
    name = ir2onnx.convert(xml).graph.input[0].name
    renamed = ir2onnx.convert(xml, rename={name: "renamed_input"})
    onnx.checker.check_model(renamed, full_check=True)
    text = str(renamed.graph)
    assert f'"{name}"' not in text and '"renamed_input"' in text
    x = np.load(xml.parent / "x_pos.npy")
    out = ir2onnx.run(renamed, {"renamed_input": x})
    np.testing.assert_allclose(next(iter(out.values())), np.load(xml.parent / "y_pos.npy"), rtol=1e-5, atol=1e-6)


# -- the summary after convert --------------------------------------------------------------------
def test_convert_prints_a_short_summary(tmp_path):
    import subprocess
    import sys

    xml = SAMPLES / "bert" / "model.xml"
    p = subprocess.run([sys.executable, "-m", "ir2onnx", "convert", str(xml), "-o", str(tmp_path) + "/"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    assert "ir2onnx: inputs   input_ids int64 [" in lines[0] and "attention_mask int64" in lines[0]
    assert lines[1].startswith("ir2onnx: outputs  last_hidden_state float32 [") and "pooler_output" in lines[1]
    assert re.match(r"ir2onnx: nodes    \d+: \w+ \d+, ", lines[2]), lines[2]
    assert re.match(r"ir2onnx: weights  f32 [\d.]+ kB in \d+ tensors, other \d+ B$", lines[3]), lines[3]
    assert re.search(r"wrote .*model.onnx \([\d.]+ kB, ONNX opset \d+", lines[-1]), lines[-1]
    assert len(lines) <= 6
    q = subprocess.run([sys.executable, "-m", "ir2onnx", "convert", str(xml), "-o", str(tmp_path / "q.onnx"),
                        "--quiet"], capture_output=True, text=True, timeout=300)
    assert q.returncode == 0 and q.stderr == "" and (tmp_path / "q.onnx").is_file()


def test_summary_names_weight_precisions_and_packing():
    from ir2onnx.api import convert_graph
    from ir2onnx.cli.summary import weights_text

    conv = convert_graph(ir2onnx.load_ir(SAMPLES / "mlp_nf4" / "model.xml"))
    text = weights_text(conv.tensors)
    assert "(packed)" in text, text


def test_an_output_named_result_id_gets_a_rename_hint(capsys, tmp_path):
    """OpenVINO names an unnamed output Result_<id>, a new id on each export."""
    x = ov_parameter([2], np.float32, "x")
    y = ops.relu(x)
    y.output(0).get_tensor().set_names(set())
    result = ops.result(y)
    model = ov.Model([result], [x], "m")
    xml = tmp_path / "m.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    name = ir2onnx.convert(xml).graph.output[0].name
    assert re.fullmatch(r"Result_\d+", name), name
    assert main(["convert", str(xml)]) == 0
    err = capsys.readouterr().err
    assert f"output '{name}' has only OpenVINO's per-export name" in err
    assert f"--rename {name}=NAME" in err
    assert main(["convert", str(xml), "--rename", f"{name}=relu"]) == 0
    assert "per-export name" not in capsys.readouterr().err
    assert [o.name for o in onnx.load(tmp_path / "m.onnx").graph.output] == ["relu"]
