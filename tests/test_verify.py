"""Verification is bounded and honest (ir2onnx/verify.py): one inference on generated inputs
within a time limit that grows with the model; a model refused only for what is true of it;
otherwise written with one warning naming the inputs to give."""
from __future__ import annotations

import time

import numpy as np
import onnxruntime as ort
import openvino as ov
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.cli.main import main
from ir2onnx.errors import Ir2OnnxError
from ir2onnx.testing import ov_parameter, ov_save
from ir2onnx.verify import default_timeout
from util import onnx_node_case

RESIZE_WITH_RUNTIME_SCALES = ["test_resize_upsample_scales_linear", "test_resize_upsample_scales_cubic",
                              "test_resize_upsample_scales_linear_align_corners",
                              "test_resize_upsample_scales_cubic_align_corners",
                              "test_resize_downsample_scales_cubic"]


def _convert(capsys, xml, out, *extra):
    start = time.perf_counter()
    code = main(["convert", str(xml), "-o", str(out), "-q", *extra])
    return code, capsys.readouterr().err.strip(), time.perf_counter() - start


def _outputs(path, feeds):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: feeds[i.name] for i in sess.get_inputs()})


@pytest.mark.parametrize("name", RESIZE_WITH_RUNTIME_SCALES)
def test_resize_with_runtime_scales_converts_verified_and_matches(capsys, tmp_path, name):
    # Regression: generated scales were random normal floats ("Scale value should be greater
    # than 0") and the model was refused; scales traced to Resize now get ones, and it runs.
    xml, feeds, expected, (rtol, atol) = onnx_node_case("resize", name, tmp_path)
    code, err, _ = _convert(capsys, xml, tmp_path / "m.onnx")
    assert code == 0 and err == "", err  # verified by the inference: nothing to warn about
    (got,) = _outputs(tmp_path / "m.onnx", feeds)
    np.testing.assert_allclose(got, expected[0], rtol=rtol, atol=max(atol, 1e-5))


def test_range_expanded_into_a_loop_converts_in_seconds(capsys, tmp_path):
    # Regression: verification fed start = limit = delta = 0 and the Loop ran for ever. Inputs
    # named start/limit/delta now get 0, 4, 1, the run ends at once, and the time limit bounds
    # any other Loop.
    xml, feeds, expected, _ = onnx_node_case("rangeop", "test_range_int32_type_negative_delta_expanded", tmp_path)
    code, err, seconds = _convert(capsys, xml, tmp_path / "m.onnx")
    assert code == 0 and err == "", err
    assert seconds < 10, seconds
    (got,) = _outputs(tmp_path / "m.onnx", feeds)
    np.testing.assert_array_equal(got, expected[0])  # [10, 7]


def test_range_as_a_loop_whose_inputs_say_nothing_times_out_with_one_warning(capsys, tmp_path):
    """The same IR with its inputs renamed s0, l0, d0: nothing says they are a range's, they get
    0, 0, 0, the Loop's trip count divides by zero, and the run is ended by the time limit: the
    model is written, with one warning naming the three inputs."""
    xml, feeds, expected, _ = onnx_node_case("rangeop", "test_range_int32_type_negative_delta_expanded", tmp_path)
    text = xml.read_text()
    for old, new in (("start", "s0"), ("limit", "l0"), ("delta", "d0")):
        text = text.replace(f'"{old}"', f'"{new}"')
        feeds[new] = feeds.pop(old)
    xml.write_text(text)
    code, err, seconds = _convert(capsys, xml, tmp_path / "m.onnx", "--verify-timeout", "1")
    assert code == 0 and len(err.splitlines()) == 1, err
    assert "did not finish within 1 s" in err and "give real values for s0, l0, d0" in err, err
    assert seconds < 10, seconds
    (got,) = _outputs(tmp_path / "m.onnx", feeds)
    np.testing.assert_array_equal(got, expected[0])


def _endless_loop(path):
    """x [2] -> Loop(trip count -1, condition always true){x + 1}: it never ends."""
    x = ov_parameter([2], name="x")
    xi = ops.parameter([2], np.float32, "xi")
    y = ops.add(xi, ops.constant(np.float32(1)))
    loop = ops.loop(ops.constant(np.int64(-1)), ops.constant(True))
    loop.set_function(ov.Model([y, ops.constant(True)], [xi]))
    loop.set_special_body_ports([-1, 1])
    loop.set_merged_input(xi, x.output(0), y.output(0))
    out = loop.get_iter_value(y.output(0), -1)
    loop.set_friendly_name("forever")
    return ov_save(path, out, [x])


def test_a_run_over_the_time_limit_writes_the_model_with_one_warning(capsys, tmp_path):
    xml = _endless_loop(tmp_path / "loop.xml")
    code, err, seconds = _convert(capsys, xml, tmp_path / "m.onnx", "--verify-timeout", "0.5")
    assert code == 0 and (tmp_path / "m.onnx").is_file()
    assert len(err.splitlines()) == 1, err
    assert "not verified by an inference" in err and "did not finish within 0.5 s" in err
    assert "layer 'forever'" in err and "give real values for x" in err
    assert seconds < 10, seconds


@pytest.mark.parametrize("bad", ["0", "-1", "nan", "inf"])
def test_a_time_limit_must_be_positive_seconds(capsys, tmp_path, bad):
    xml = _endless_loop(tmp_path / "loop.xml")
    code, err, _ = _convert(capsys, xml, tmp_path / "m.onnx", "--verify-timeout", bad)
    assert code == 2 and err.startswith("ir2onnx: error: the verification time limit") and len(err.splitlines()) == 1
    assert not (tmp_path / "m.onnx").exists()
    with pytest.raises(Ir2OnnxError, match="time limit"):
        ir2onnx.convert(xml, verify_timeout=float(bad))


def test_the_default_time_limit_grows_with_the_model():
    assert default_timeout(0) == 3
    assert default_timeout(2**30) == 33
    assert default_timeout(4 * 2**30) == 123
    assert default_timeout(2**40) == 600  # at most ten minutes


def test_a_node_that_no_input_reaches_is_the_models_own_failure():
    # A node fed by constants only fails whatever the inputs: refused (a session of the
    # unoptimized model runs it too, so onnxruntime's folding cannot hide it).
    import onnx
    from onnx import TensorProto, helper

    from ir2onnx.runtime import sessions
    from ir2onnx.verify import _Run

    big = helper.make_tensor("shape", TensorProto.INT64, [2], [2**40, 2**40])
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["c"], name="layer/ConstantOfShape"),
             helper.make_node("Add", ["x", "x"], ["y"], name="other/Add")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("c", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [big])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    run = _Run(sessions, sessions.session(model, "cpu", quiet=True), model, {}, 5.0)
    assert run.inputs_upstream("layer/ConstantOfShape") == []
    assert run.inputs_upstream("other/Add") == ["x"]
    assert run.inputs_upstream("other/Add_fused_by_ort") == ["x"]  # a node onnxruntime made from it
    assert run.inputs_upstream("elsewhere") is None
