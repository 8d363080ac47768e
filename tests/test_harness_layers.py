"""`ir2onnx check --layers`: every layer's output of the converted model against OpenVINO's, the
first layer beyond tolerance and the growth after it."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import ir2onnx
from ir2onnx.cli.main import main
from ir2onnx.errors import Ir2OnnxError
from ir2onnx.harness.html_report import to_html
from ir2onnx.harness.layers import LayerDrift, LayerError, compare_layer
from ir2onnx.harness.report import SCHEMA_PATH, format_text, to_dict, to_markdown
from ir2onnx.ir.reader import load_ir
from ir2onnx.lowering.convert import convert_graph
from ir2onnx.lowering.registry import LOWERINGS

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
INT8 = SAMPLES / "real" / "nncf_resnet3" / "model.xml"  # three quantized residual blocks (NNCF)
FLOAT = SAMPLES / "real" / "cnn" / "model.xml"


@pytest.fixture(scope="module")
def int8_result():
    """Eight images, so that some FakeQuantize level flips on a near-tie somewhere (one flip in
    ~3e4 elements per quantized layer, measured on seed 0)."""
    return ir2onnx.check(INT8, shapes={"x": (8, 3, 32, 32)}, layers=True, oracle=False)


def test_int8_drift_starts_at_a_quantizer(int8_result):
    drift = int8_result.layers
    assert drift.a == "ort:cpu" and drift.b == "openvino" and len(drift.layers) >= 30
    first = drift.layers[drift.first]
    # the convolutions agree within f32's tolerance; a level flip is where the two part
    assert first.type == "FakeQuantize-opset1" and first.outside > 0
    assert not any(e.beyond for e in drift.layers[:drift.first])
    assert [e.index for e in drift.layers] == list(range(len(drift.layers)))  # graph order
    later = [drift.growth(i) for i in range(drift.first + 1, len(drift.layers))]
    assert any(g and g > 1 for g in later)  # it grows through the next quantized layers
    assert f"#{first.index} '{first.layer}' (FakeQuantize-opset1)" in drift.summary()


def test_int8_drift_in_every_report(int8_result):
    text = format_text(int8_result)
    first = int8_result.layers.layers[int8_result.layers.first]
    line = next(l for l in text.splitlines() if "FIRST" in l)
    assert line.endswith(first.layer) and "FakeQuantize-opset1" in line
    assert "first layer beyond tolerance: #" in text
    assert f"| {first.index} | `{first.layer}` | FakeQuantize-opset1 |" in to_markdown(int8_result)
    report = json.loads(json.dumps(to_dict(int8_result), default=str))
    jsonschema.validate(report, json.loads(SCHEMA_PATH.read_text()))
    assert report["layers"]["first"] == int8_result.layers.first
    page = to_html(int8_result)
    assert 'alt="error per layer"' in page and f"<code>{first.layer}</code>" in page


def test_float_model_has_no_drift_and_needs_no_oracle():
    """A float CNN: every layer within tolerance. The oracle is over its budget and skipped; the
    layers need only onnxruntime and OpenVINO."""
    result = ir2onnx.check(FLOAT, layers=True, oracle_budget=1)
    assert result.backend("oracle").status == "skipped"
    drift = result.layers
    assert drift.first is None and len(drift.layers) >= 5
    assert all(e.max_abs <= 1e-4 + 1e-4 * 10 and e.size > 0 for e in drift.layers)
    assert drift.summary().startswith("no layer beyond tolerance")


def test_a_broken_lowering_is_the_first_layer_named(monkeypatch):
    """Clamp lowered as Identity: the float CNN's outputs fail, and the layers name the Clamp as
    the first one beyond tolerance, every layer before it agreeing."""
    def unclamped(ctx, layer, inputs):
        return [ctx.b.Identity(inputs[0].name)]

    monkeypatch.setitem(LOWERINGS, ("Clamp", "opset1"), unclamped)
    result = ir2onnx.check(FLOAT, layers=True, oracle=False)
    assert not result.ok
    drift = result.layers
    first = drift.layers[drift.first]
    assert (first.layer, first.type) == ("aten::relu6/Clamp", "Clamp-opset1")
    assert [e.layer for e in drift.layers[:drift.first]][:3] == [
        "Multiply_2942", "__module.bn/aten::batch_norm/BatchNormInference", "aten::relu/Relu"]
    assert all(e.beyond for e in drift.layers[drift.first:])  # nothing downstream recovers


def test_layers_from_the_command_line(capsys):
    """(OpenVINO in a child process, as the command runs it: the layers need it even when the
    outputs are compared without it.)"""
    assert main(["check", str(INT8), "--layers", "--no-openvino", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "\nlayers  ort:cpu vs openvino: 39 layer output(s) in graph order; rel" in out  # all found
    assert "  __module.fc/aten::linear/Add\n" in out  # the last layer, by name
    assert any(l.startswith(("  first layer beyond tolerance: #", "  no layer beyond")) for l in out.splitlines())


def test_layers_refuse_a_stateful_model(capsys):
    xml = next(p for p in sorted((SAMPLES / "llm").rglob("*.xml")))
    assert main(["check", str(xml), "--layers", "--quiet"]) == 2
    assert "stateful" in capsys.readouterr().err


def test_layers_openvino_refuses_are_reported_not_fatal():
    """An IR OpenVINO cannot load (TensorFlow's NHWC DepthToSpace attributes): the outputs are
    still compared, and the layers say why they were not."""
    xml = SAMPLES / "depth_to_space" / "tf_nhwc_example1.xml"
    result = ir2onnx.check(xml, layers=True)
    assert result.ok and result.backend("openvino").status == "refused"
    drift = result.layers
    assert drift.layers == [] and "OpenVINO cannot load this IR" in drift.message
    assert format_text(result).count("\nlayers  not compared: OpenVINO cannot load this IR") == 1
    jsonschema.validate(json.loads(json.dumps(to_dict(result), default=str)), json.loads(SCHEMA_PATH.read_text()))


def test_layers_without_openvino_say_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "openvino", None)  # import openvino raises ImportError
    with pytest.raises(Ir2OnnxError, match=r"--layers compares onnxruntime with OpenVINO .*pip install openvino"):
        ir2onnx.check(FLOAT, layers=True, openvino=False, oracle=False)


def test_exposed_layers_are_outputs_and_plain_conversion_is_unchanged():
    graph = load_ir(INT8)
    plain = convert_graph(graph)
    exposed = convert_graph(graph, expose_layers=True)
    assert plain.probes == {} and len(plain.model.graph.output) == 2
    names = {o.name for o in exposed.model.graph.output}
    assert set(exposed.probes) <= names and len(exposed.probes) >= 30
    kinds = {graph.layers[lid].type for lid, _ in exposed.probes.values()}
    assert {"Convolution", "FakeQuantize", "Add"} <= kinds and not kinds & {"Const", "Parameter", "Result"}


# -- the arithmetic of the table -----------------------------------------------------------------
class _Layer:
    def __init__(self, name, type_="Add"):
        self.name, self.type, self.version = name, type_, "opset1"


def test_compare_layer_counts_elements_outside_tolerance():
    b = np.array([1.0, 2.0, 4.0], np.float32)
    e = compare_layer(0, _Layer("x"), 0, b + np.array([0, 0, 0.5], np.float32), b, None, None)
    assert (e.outside, e.size, e.max_abs, e.rel, e.beyond) == (1, 3, 0.5, 0.125, True)
    # an f16 value (OpenVINO returns an f16 layer's output in f16) is judged at f16's tolerance
    e = compare_layer(0, _Layer("x"), 0, b + 1e-3, b.astype(np.float16), None, None)
    assert not e.beyond
    e = compare_layer(0, _Layer("x"), 0, np.zeros((2, 3)), np.zeros((3, 2)), None, None)
    assert e.beyond and e.reason == "shape [2, 3] vs [3, 2]"


def test_drift_names_the_first_layer_and_the_growth():
    def err(i, name, rel, outside):
        return LayerError(i, name, "Add-opset1", 0, (4,), rel, rel, outside, 4)

    drift = LayerDrift("ort:cpu", "openvino", None, None,
                       [err(0, "a", 1e-7, 0), err(1, "b", 0.01, 1), err(2, "c", 0.05, 3), err(3, "d", 0.02, 2)])
    assert drift.first == 1
    assert [drift.growth(i) for i in range(4)] == [None, None, pytest.approx(5.0), pytest.approx(2.0)]
    s = drift.summary()
    assert s.startswith("first layer beyond tolerance: #1 'b'")
    assert "peaks at #2 'c' (rel 0.05, 5x)" in s and "'d', is at rel 0.02 (2x)" in s
