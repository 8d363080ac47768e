"""The `ir2onnx` command end to end (installed console script and python -m)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ir2onnx.cli.main import main
from util import convert_model


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ir2onnx", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_convert_then_run_end_to_end(tmp_path):
    xml = convert_model(tmp_path / "m.xml")
    p = _cli("convert", xml)
    assert p.returncode == 0, p.stderr
    onnx_path = tmp_path / "m.onnx"  # default output: beside the .xml
    assert onnx_path.is_file()
    x = np.arange(6, dtype=np.float16).reshape(2, 3)
    np.save(tmp_path / "x.npy", x)
    p = _cli("run", onnx_path, "--input", f"x={tmp_path / 'x.npy'}", "--save", tmp_path / "out.npz")
    assert p.returncode == 0, p.stderr
    assert "output y: shape [2, 3] float32" in p.stdout
    out = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(out["y"], x.astype(np.float32))
    np.testing.assert_array_equal(out["w"], np.arange(6, dtype=np.float32).reshape(2, 3))


def test_run_xml_with_generated_inputs_and_shape(capsys, tmp_path):
    xml = convert_model(tmp_path / "m.xml")
    assert main(["run", str(xml), "--shape", "x=4,3", "--save", str(tmp_path / "o.npz")]) == 0
    assert np.load(tmp_path / "o.npz")["y"].shape == (4, 3)
    assert not (tmp_path / "m.onnx").exists()  # run converts into a temporary folder


@pytest.mark.parametrize("args,message", [
    (["run", "{xml}", "--shape", "x=4,5"], "does not fit"),
    (["run", "{xml}", "--shape", "nope=4,3"], "has no input 'nope'"),
    (["run", "{xml}", "--input", "x"], "expected NAME=FILE.npy"),
    (["run", "{xml}", "--input", "x={tmp}/missing.npy"], "cannot read"),
    (["run", "{tmp}/missing.onnx"], "not found"),
    (["run", "{xml}", "--provider", "cuda"], "not available"),
])
def test_run_errors_exit_2(capsys, tmp_path, args, message):
    xml = convert_model(tmp_path / "m.xml")
    argv = [a.format(xml=xml, tmp=tmp_path) for a in args]
    if "cuda" in args:
        import onnxruntime as ort

        if "CUDAExecutionProvider" in ort.get_available_providers():
            pytest.skip("a CUDA provider is present; this test is for machines without one")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_ops_lists_pairs():
    p = _cli("ops")
    assert p.returncode == 0
    lines = p.stdout.split()
    for pair in ["Parameter-opset1", "Const-opset1", "Result-opset1", "Convert-opset1"]:
        assert pair in lines


@pytest.mark.parametrize("command", ["convert", "run", "ops"])
def test_help_has_an_example(command):
    p = _cli(command, "--help")
    assert p.returncode == 0 and "example" in p.stdout and f"ir2onnx {command}" in p.stdout


def test_console_script_and_version(tmp_path):
    import shutil

    exe = shutil.which("ir2onnx", path=str(__import__("pathlib").Path(sys.executable).parent))
    assert exe, "the ir2onnx console script is installed beside the interpreter"
    p = subprocess.run([exe, "--version"], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.startswith("ir2onnx ")


def test_no_command_is_a_usage_error():
    p = _cli()
    assert p.returncode == 2 and "usage:" in p.stderr


# -- verification: a node onnxruntime's CPU provider cannot run is refused at conversion ----------
def _kernel_gap(tmp_path, monkeypatch):
    """An IR whose Select on i16 is lowered (by a stand-in lowering) to a plain Where, for which
    onnxruntime's CPU provider has no i16 kernel: valid ONNX that onnxruntime cannot run."""
    import openvino.opset15 as ops

    from ir2onnx.lowering.registry import LOWERINGS
    from ir2onnx.testing import ov_parameter, ov_save

    monkeypatch.setitem(LOWERINGS, ("Select", "opset1"), lambda ctx, layer, inputs: [ctx.b.Where(*inputs)])
    c, t, e = ov_parameter([3], np.bool_, "c"), ov_parameter([3], np.int16, "t"), ov_parameter([3], np.int16, "e")
    node = ops.select(c, t, e)
    node.set_friendly_name("mask/select")
    return ov_save(tmp_path / "gap.xml", node, [c, t, e])


def test_convert_refuses_a_kernel_gap_naming_the_layer(capsys, tmp_path, monkeypatch):
    xml = _kernel_gap(tmp_path, monkeypatch)
    out = tmp_path / "out" / "gap.onnx"
    assert main(["convert", str(xml), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "'mask/select' (Select-opset1" in err and "Where" in err and "CPU provider" in err
    assert not out.exists() and not list(out.parent.iterdir())  # nothing, not even a temporary file
    assert main(["convert", str(xml), "-o", str(out), "--no-verify"]) == 0
    assert out.is_file()


def test_api_verifies_unless_told_not_to(tmp_path, monkeypatch):
    import ir2onnx
    from ir2onnx.errors import UnsupportedLayer

    xml = _kernel_gap(tmp_path, monkeypatch)
    for convert in (lambda **kw: ir2onnx.convert(xml, **kw),
                    lambda **kw: ir2onnx.convert_file(xml, tmp_path / "g.onnx", **kw)):
        with pytest.raises(UnsupportedLayer, match="'mask/select'.*cannot run the ONNX node 'mask/select/Where"):
            convert()
        assert not (tmp_path / "g.onnx").exists()
    assert ir2onnx.convert(xml, verify=False).graph.node[0].op_type == "Where"
    assert ir2onnx.convert_file(xml, tmp_path / "g.onnx", verify=False).is_file()


def _fused_at_run_time(tmp_path, monkeypatch, shape=(1, 4, 6, 6)):
    """A quantized Conv (``--quantized qdq``) whose output FakeQuantize (ranges per channel) a stand-in lowering writes
    as a per-axis QuantizeLinear -> DequantizeLinear: valid ONNX, and onnxruntime runs it with its
    graph optimizations off, but its default optimizations fuse it into a QLinearConv whose
    kernel takes a scalar output zero point only, and that fails when the model first runs."""
    import openvino.opset15 as ops

    from ir2onnx.testing import quantized_models as qm
    from ir2onnx.lowering.registry import LOWERINGS
    from ir2onnx.testing import ov_parameter, ov_save

    real = LOWERINGS[("FakeQuantize", "opset1")]

    def per_axis(ctx, layer, inputs):
        lo, hi = (np.asarray(v.value(), np.float32) for v in inputs[1:3])
        if lo.size == 1 or inputs[0].is_const:
            return real(ctx, layer, inputs)
        s = ((hi - lo) / 255).reshape(-1)
        z = ctx.b.const(np.rint(-lo.reshape(-1) / s).astype(np.uint8), np.uint8, "zp")
        s = ctx.b.const(s, np.float32, "scale")
        return [ctx.b.DequantizeLinear(ctx.b.QuantizeLinear(inputs[0], s, z, axis=1), s, z, axis=1)]

    monkeypatch.setitem(LOWERINGS, ("FakeQuantize", "opset1"), per_axis)
    x = ov_parameter(list(shape), name="x")
    w = np.random.default_rng(0).standard_normal((4, 4, 3, 3)).astype(np.float32)
    y = ops.convolution(qm.activation_fq(x, 3.0, False), qm.weight_fq(w, compress=False), [1, 1], [1, 1],
                        [1, 1], [1, 1])
    step = np.array([1.0, 2.0, 0.5, 1.5], np.float32).reshape(1, 4, 1, 1) * np.float32(4 / 255)
    y.set_friendly_name("head/conv")
    return ov_save(tmp_path / "fused.xml", qm.fake_quantize(y, -128 * step, 127 * step), [x])


def test_convert_runs_the_model_once_and_refuses_a_fusion_that_fails(capsys, tmp_path, monkeypatch):
    """Verification runs one inference at the session options users get: the QLinearConv that
    onnxruntime's default optimizations make (named after the Conv) fails there, and convert exits 2
    with one line naming the Convolution layer, writing nothing (a session alone does not find it); --no-verify writes the file."""
    import ir2onnx
    from ir2onnx.errors import UnsupportedLayer

    xml = _fused_at_run_time(tmp_path, monkeypatch)
    out = tmp_path / "out" / "fused.onnx"
    assert main(["convert", str(xml), "-o", str(out), "--quantized", "qdq"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after the summary lines
    assert err.startswith("ir2onnx: error: ")
    assert "'head/conv' (Convolution-opset1" in err and "graph optimizations" in err
    assert "QLinearConv" in err and "zero point" in err and "onnxruntime_src" not in err
    assert not out.exists() and not list(out.parent.iterdir())
    with pytest.raises(UnsupportedLayer, match="'head/conv'.*fails to run"):
        ir2onnx.convert(xml, quantized="qdq")
    assert main(["convert", str(xml), "-o", str(out), "--quantized", "qdq", "--no-verify"]) == 0
    assert out.is_file()


def test_a_failure_the_generated_inputs_may_cause_is_a_warning(capsys, tmp_path):
    """A run that fails with the optimizations off too, on inputs whose values the model depends on
    (a run-time Reshape target), may be the generated values' fault: the file is written, with a
    warning naming the layer."""
    import openvino.opset15 as ops

    from ir2onnx.testing import ov_parameter, ov_save

    x, shape = ov_parameter([2, 3], name="x"), ov_parameter([2], np.int64, "shape")
    node = ops.reshape(x, shape, False)
    node.set_friendly_name("view")
    xml = ov_save(tmp_path / "r.xml", node, [x, shape])
    assert main(["convert", str(xml), "-o", str(tmp_path / "r.onnx")]) == 0
    err = capsys.readouterr().err
    assert "warning: not verified by an inference: one inference on generated inputs" in err
    assert "layer 'view'" in err and "give real values for x, shape" in err
    assert len([line for line in err.splitlines() if "warning" in line]) == 1
    assert (tmp_path / "r.onnx").is_file()


def test_convert_prints_the_opset_chosen_and_forced(tmp_path):
    xml = convert_model(tmp_path / "m.xml")
    p = _cli("convert", xml)
    assert p.returncode == 0 and "ONNX opset 17, the lowest >= 17 every layer needs" in p.stderr, p.stderr
    p = _cli("convert", xml, "--opset", 19)
    assert p.returncode == 0 and "ONNX opset 19, forced by --opset" in p.stderr, p.stderr


def test_ops_describes_named_types_with_their_onnx_chain():
    p = _cli("ops", "detectionoutput", "MatrixNms")
    assert p.returncode == 0
    heads = [line for line in p.stdout.splitlines() if not line.startswith(" ")]
    assert heads == ["DetectionOutput-opset1", "DetectionOutput-opset8", "MatrixNms-opset8"]
    assert p.stdout.count("  ONNX:       ") == 3 and "NonMaxSuppression" in p.stdout
    bad = _cli("ops", "DetectionOutput", "NoSuchOp")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip() == ("ir2onnx: error: not a supported IR type: NoSuchOp (ir2onnx ops lists "
                                  "them all)")


def test_ops_notes_run_time_and_constant_inputs():
    lines = {line.split()[0]: line for line in _cli("ops").stdout.splitlines()}
    assert "run-time inputs: data, k" in lines["TopK-opset11"]
    assert "run-time inputs: data, pads_begin, pads_end, pad_value?" in lines["Pad-opset12"]
    assert "constant only: axis (ONNX's Split takes the axis as an attribute)" in lines["VariadicSplit-opset1"]
    assert "split_lengths" in lines["VariadicSplit-opset1"].split(";")[0]
    assert "constant only" not in lines["ReduceMax-opset1"]
