"""The interop harness: `ir2onnx check`, its Python API, the oracle interpreter, the selftest."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import ir2onnx
from ir2onnx.runtime import sessions as runtime
from ir2onnx.cli.main import main
from ir2onnx.harness.compare import compare, default_tolerance
from ir2onnx.errors import Ir2OnnxError, InvalidLayer, UnsupportedLayers
from ir2onnx.harness.backends import make_feeds, provider_status
from ir2onnx.ir.reader import load_ir
from ir2onnx.lowering.registry import LOWERINGS, lowering_for
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.oracles.registry import ORACLES, oracle_for
from ir2onnx.selftest.cases import ov_build, param
from ir2onnx.testing import IRWriter, assert_check, run_openvino


def _convert_model(tmp_path, src=np.float32, dst="i32", shape=(2, 3)):
    """OpenVINO-written IR: x -> Convert(dst) -> y."""
    def make(ops):
        x = param(ops, list(shape), src)
        return [(ops.convert(x, dst), "y")], [x]
    return ov_build(make, name="conv")(tmp_path)


def _two_outputs(tmp_path):
    def make(ops):
        x = param(ops, [2, 2], np.int32)
        return [(ops.convert(x, "f32"), "b_first"), (ops.convert(x, "i64"), "a_second")], [x]
    return ov_build(make, name="two")(tmp_path)


def _wrong_convert(ctx, layer, inputs):
    """A broken Convert: float -> integer rounds instead of truncating (others are right)."""
    x, dst = inputs[0], layer.attrs["destination_type"]
    return [ctx.b.Cast(ctx.b.Round(x) if dst.is_integer else x, to=dst.onnx)]


X = np.array([[2.7, -2.7, 0.5], [1.0, -1.5, 3.2]], np.float32)


# -- check: agreement, disagreement, exit codes -------------------------------------------------
def test_check_passes_on_openvino_written_model(tmp_path, capsys):
    xml = _convert_model(tmp_path)
    np.save(tmp_path / "x.npy", X)
    assert main(["check", str(xml), "--input", f"x={tmp_path / 'x.npy'}"]) == 0
    out = capsys.readouterr().out
    assert "output 'y'  shape [2,3]  int32" in out
    for pair in ("ort:cpu vs oracle", "ort:cpu vs openvino", "oracle vs openvino"):
        line = next(l for l in out.splitlines() if l.strip().startswith(pair))
        assert line.endswith("pass") and "exact" in line
    assert "result  PASS" in out


def test_wrong_lowering_makes_check_exit_1_naming_output_and_pairs(tmp_path, capsys, monkeypatch):
    xml = _convert_model(tmp_path)
    np.save(tmp_path / "x.npy", X)
    monkeypatch.setitem(LOWERINGS, ("Convert", "opset1"), _wrong_convert)
    assert main(["check", str(xml), "--input", f"x={tmp_path / 'x.npy'}"]) == 1
    out = capsys.readouterr().out
    assert "output 'y': ort:cpu and oracle disagree (3 element(s) differ, max abs 1)" in out
    assert "output 'y': ort:cpu and openvino disagree" in out
    assert "oracle and openvino" not in out.split("result")[1]  # the reference pair still agrees


def test_swapped_depth_to_space_mode_is_caught(tmp_path, capsys, monkeypatch):
    def make(ops):
        x = param(ops, [1, 8, 2, 3], np.float32)
        return [(ops.depth_to_space(x, "blocks_first", 2), "y")], [x]
    xml = ov_build(make, name="d2s")(tmp_path)
    right = lowering_for("DepthToSpace", "opset1")
    assert right is not None
    assert main(["check", str(xml)]) == 0

    def swapped(ctx, layer, inputs):
        mode = {"blocks_first": "depth_first", "depth_first": "blocks_first"}[layer.attrs["mode"]]
        return right(ctx, dataclasses.replace(layer, attrs={**layer.attrs, "mode": mode}), inputs)

    monkeypatch.setitem(LOWERINGS, ("DepthToSpace", "opset1"), swapped)
    capsys.readouterr()
    assert main(["check", str(xml)]) == 1
    assert "output 'y': ort:cpu and oracle disagree" in capsys.readouterr().out


def test_openvino_refuses_ir_attributes_it_does_not_know(tmp_path, capsys):
    """TensorFlow-layout DepthToSpace: OpenVINO would silently run NCHW semantics."""
    w = IRWriter()
    x = w.parameter([1, 4, 2, 4], "f32", "x")
    y = w.layer("DepthToSpace", "opset1", [x], {"block_size": 2, "mode": "blocks_first", "data_format": "NHWC"},
                [("f32", (1, 8, 4, 1))], out_names=["y"])[0]
    w.result(y)
    xml = w.save(tmp_path / "tf.xml")
    assert main(["check", str(xml)]) == 0
    out = capsys.readouterr().out
    assert "openvino   refused      OpenVINO ignores attribute(s) data_format of layer" in out
    assert "not compared: openvino (refused)" in out and "ort:cpu vs oracle" in out


def test_outputs_are_matched_by_name_not_position(tmp_path):
    result = assert_check(_two_outputs(tmp_path))
    assert {o.name: o.dtype for o in result.outputs} == {"b_first": "float32", "a_second": "int64"}
    for b in result.backends:
        assert set(b.outputs) == {"b_first", "a_second"}, b.name


def test_python_api_result(tmp_path):
    xml = _convert_model(tmp_path, dst="f16")
    result = ir2onnx.check(xml, inputs={"x": X})
    assert isinstance(result, ir2onnx.CheckResult) and result.ok and result.failures() == []
    assert [b.name for b in result.backends] == ["ort:cpu", "oracle", "openvino"]
    assert all(b.status == "ok" for b in result.backends)
    assert result.inputs["x"] is X and result.input_origin == {"x": "given"}
    (o,) = result.outputs
    assert (o.name, o.shape, o.dtype) == ("y", (2, 3), "float16")
    assert [c.pair for c in o.comparisons] == ["ort:cpu vs oracle", "ort:cpu vs openvino", "oracle vs openvino"]
    assert all(c.max_abs == 0 and (c.rtol, c.atol) == default_tolerance(np.float16) for c in o.comparisons)
    for b in result.backends:  # every backend saw the same input
        np.testing.assert_array_equal(b.outputs["y"], X.astype(np.float16))


def test_reports(tmp_path):
    xml = _convert_model(tmp_path)
    assert main(["check", str(xml), "--report", str(tmp_path / "r.json")]) == 0
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["ok"] is True and data["failures"] == []
    assert data["outputs"][0]["name"] == "y" and len(data["outputs"][0]["comparisons"]) == 3
    assert data["inputs"] == [{"name": "x", "shape": [2, 3], "dtype": "float32", "origin": "random (seed 0)"}]
    assert main(["check", str(xml), "--report", str(tmp_path / "r.md")]) == 0
    md = (tmp_path / "r.md").read_text()
    assert "| y | [2,3] | int32 | ort:cpu vs oracle | 0 | 0 | exact | pass |" in md


def test_a_failing_backend_is_a_disagreement(tmp_path, capsys, monkeypatch):
    xml = _convert_model(tmp_path)
    oracle_for("Convert", "opset1")

    def broken(layer, inputs):
        raise InvalidLayer(layer, "broken on purpose")

    monkeypatch.setitem(ORACLES, ("Convert", "opset1"), broken)
    assert main(["check", str(xml)]) == 1
    assert "backend oracle failed: InvalidLayer: layer 'Convert" in capsys.readouterr().out


def test_every_backend_failing_is_bad_input(tmp_path, capsys):
    def make(ops):
        x, s = param(ops, [2, 3, 4], np.float32), param(ops, [2], np.int64, "shape")
        return [(ops.reshape(x, s, False), "y")], [x, s]
    xml = ov_build(make, name="rs")(tmp_path)
    np.save(tmp_path / "s.npy", np.array([5, 5], np.int64))
    assert main(["check", str(xml), "--input", f"shape={tmp_path / 's.npy'}"]) == 2
    err = capsys.readouterr().err
    assert "every backend failed" in err and "ort:cpu" in err and "oracle" in err


def test_bad_input_exits_2(tmp_path, capsys):
    xml = _convert_model(tmp_path)
    np.save(tmp_path / "x64.npy", X.astype(np.float64))
    w = IRWriter()
    w.result(w.layer("NoSuchOp", "opset1", [w.parameter([2], "f32", "x")], outputs=[("f32", (2,))])[0])
    w.save(tmp_path / "unsupported.xml")
    cases = {
        "not found": [str(tmp_path / "missing.xml")],
        "no lowering": [str(tmp_path / "unsupported.xml")],
        "must be float32": [str(xml), "--input", f"x={tmp_path / 'x64.npy'}"],
        "no input 'z'": [str(xml), "--shape", "z=1,2"],
        "does not fit": [str(xml), "--shape", "x=4,3"],
        "must end in .json, .md or .html": [str(xml), "--report", str(tmp_path / "r.txt")],
    }
    for needle, args in cases.items():
        assert main(["check", *args]) == 2, needle
        assert needle in capsys.readouterr().err, needle


def test_cuda_is_used_only_when_usable(tmp_path, capsys):
    xml = _convert_model(tmp_path)
    usable, why = provider_status("cuda")
    assert main(["check", str(xml), "--provider", "cuda"]) == (0 if usable else 2)
    assert main(["check", str(xml), "--provider", "all"]) == 0
    out = capsys.readouterr().out
    if usable:
        assert "ort:cuda vs oracle" in out
    else:
        assert f"ort:cuda   unavailable  {why}" in out and "ort:cuda vs" not in out


# -- inputs, the interpreter, comparisons ---------------------------------------------------------
def test_generated_inputs_match_the_run_command(tmp_path):
    def make(ops):
        a, b = param(ops, [None, 3], np.float32, "a"), param(ops, [2], np.int32, "b")
        return [(ops.convert(a, "f16"), "y"), (ops.convert(b, "i64"), "z")], [a, b]
    xml = ov_build(make, name="two_in")(tmp_path)
    feeds, origin = make_feeds(load_ir(xml), shapes={"a": (4, 3)}, seed=3)
    sess = runtime.session(ir2onnx.convert(xml).SerializeToString())
    expected = runtime.make_inputs(sess, shapes={"a": (4, 3)}, seed=3)
    assert list(feeds) == list(expected) == ["a", "b"]
    for name in feeds:
        np.testing.assert_array_equal(feeds[name], expected[name])
        assert feeds[name].dtype == expected[name].dtype
    assert origin == {"a": "random (seed 3)", "b": "random (seed 3)"}


def test_interpreter_evaluates_a_graph_by_output_name(tmp_path):
    graph = load_ir(_two_outputs(tmp_path))
    x = np.array([[1, -2], [3, 4]], np.int32)
    out = evaluate(graph, {"x": x})
    assert list(out) == ["b_first", "a_second"]
    assert out["b_first"].dtype == np.float32 and out["a_second"].dtype == np.int64
    np.testing.assert_array_equal(out["b_first"], x)
    ov = run_openvino(graph.xml_path, {"x": x})
    assert sorted(str(a.dtype) for a in ov) == sorted(str(a.dtype) for a in out.values())


def test_interpreter_names_a_passthrough_output_after_its_result(tmp_path):
    w = IRWriter()
    x = w.parameter([2], "f32", "x")
    w.result(x, name="out")
    graph = load_ir(w.save(tmp_path / "p.xml"))
    out = evaluate(graph, {"x": np.ones(2, np.float32)})
    assert list(out) == ["out"]
    assert [o.name for o in ir2onnx.convert(graph).graph.output] == ["out"]


def test_interpreter_refuses_missing_oracles_and_bad_feeds(tmp_path, monkeypatch):
    graph = load_ir(_convert_model(tmp_path))
    for feeds, needle in [({}, "no value for input(s) 'x'"), ({"x": X, "q": X}, "no input 'q'"),
                          ({"x": X.astype(np.float16)}, "must be f32"), ({"x": X[:1]}, "has shape [1, 3]")]:
        with pytest.raises(Ir2OnnxError, match=needle.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
            evaluate(graph, feeds)
    oracle_for("Convert", "opset1")
    monkeypatch.delitem(ORACLES, ("Convert", "opset1"))
    with pytest.raises(UnsupportedLayers, match="Convert-opset1.*no oracle"):
        evaluate(graph, {"x": X})


def test_compare_tolerances():
    a = np.array([1.0, 2.0, np.nan, np.inf], np.float32)
    assert compare("y", "a", a, "b", a.copy()).passed
    near = a + np.array([5e-5, 1e-4, 0, 0], np.float32)
    c = compare("y", "a", a, "b", near)
    assert c.passed and 0 < c.max_abs < 2e-4
    far = compare("y", "a", a, "b", a + np.float32(1e-2))
    assert not far.passed and far.mismatches == 2 and far.max_abs == pytest.approx(1e-2, rel=1e-3)
    assert compare("y", "a", a, "b", a + np.float32(1e-2), rtol=0, atol=0.1).passed
    assert not compare("y", "a", a, "b", np.array([1, 2, 0, np.inf], np.float32)).passed  # NaN vs 0
    assert not compare("y", "a", a, "b", np.array([1, 2, np.nan, -np.inf], np.float32)).passed
    ints = np.array([10**15, 3], np.int64)
    off = compare("y", "a", ints, "b", ints + np.array([1, 0]), rtol=1.0, atol=100.0)
    assert not off.passed and off.exact and off.max_abs == 1.0  # integers stay exact
    assert not compare("y", "a", np.array([True]), "b", np.array([False])).passed
    assert compare("y", "a", a, "b", a.astype(np.float16)).reason == "dtype float32 vs float16"
    assert compare("y", "a", a, "b", a[:2]).reason == "shape [4] vs [2]"
    zeros = np.zeros(2, np.float32)
    assert compare("y", "a", zeros, "b", -zeros).passed
    assert not compare("y", "a", zeros, "b", -zeros, bitexact=True).passed
    assert default_tolerance(np.float32) == (1e-4, 1e-4) and default_tolerance(np.int8) == (0, 0)


# -- selftest ---------------------------------------------------------------------------------------
def _table(out: str) -> tuple[list[str], dict[str, list[str]]]:
    rows = [[c.strip() for c in l.strip("|").split("|")] for l in out.splitlines() if l.startswith("| ")]
    return rows[0], {r[0]: r[1:] for r in rows[1:]}


def test_selftest_prints_the_matrix(capsys):
    assert main(["selftest", "-k", "convert/", "-k", "core/"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Conformance matrix, ") and "onnxruntime 1." in out
    header, rows = _table(out)
    assert header == ["op", "cases", "spec", "ort:cpu", "ort:cuda", "openvino", "ONNX opset"]
    assert rows["Convert-opset1"][0] == "11" and rows["Convert-opset1"][2] == "pass 11/11"
    assert rows["Convert-opset1"][-1] == "17"  # the opset the converter chose for every case
    assert rows["Result-opset1"][2] == "pass 2/2"
    cuda = [cells[3] for cells in rows.values()]
    if provider_status("cuda")[0]:
        assert all(c.startswith("pass") for c in cuda if c != "no case")
    else:
        assert set(cuda) <= {"unavailable", "no case"} and "unavailable" in cuda


def test_selftest_report_fills_the_docs_page_between_its_markers(tmp_path, capsys):
    """docs/conformance.md keeps its prose: --report replaces only what its markers enclose."""
    page = tmp_path / "conformance.md"
    page.write_text("# Conformance\n\nprose\n<!-- matrix:start -->\nold\n<!-- matrix:end -->\n\nafter\n")
    assert main(["selftest", "--provider", "cpu", "--no-openvino", "-k", "core/", "--report", str(page)]) == 0
    text = page.read_text()
    assert text.startswith("# Conformance\n\nprose\n<!-- matrix:start -->\nConformance matrix, ")
    assert "old" not in text and text.endswith("\n<!-- matrix:end -->\n\nafter\n")
    plain = tmp_path / "plain.md"
    assert main(["selftest", "--provider", "cpu", "--no-openvino", "-k", "core/", "--report", str(plain)]) == 0
    assert plain.read_text().startswith("Conformance matrix, ")
    capsys.readouterr()


def test_selftest_matrix_names_the_opset_each_op_needs(capsys):
    """SegmentMax's ScatterND(max) needs ONNX opset 18: the converter chooses it, the matrix says so."""
    assert main(["selftest", "--provider", "cpu", "--no-openvino", "-k", "segmentmax/"]) == 0
    _, rows = _table(capsys.readouterr().out)
    assert rows["SegmentMax-opset16"][-1] == "18"


def test_selftest_catches_a_wrong_lowering(capsys, monkeypatch):
    monkeypatch.setitem(LOWERINGS, ("Convert", "opset1"), _wrong_convert)
    assert main(["selftest", "--provider", "cpu", "-k", "convert/f32-i32", "-k", "convert/f32-f16"]) == 1
    out = capsys.readouterr().out
    _, rows = _table(out)
    assert rows["Convert-opset1"][2] == "FAIL 1/2"
    assert "- FAIL convert/f32-i32: ort:cpu: output 'y' differs from the oracle" in out


def test_selftest_reports_ops_without_lowering(capsys, monkeypatch):
    lowering_for("Convert", "opset1")
    monkeypatch.delitem(LOWERINGS, ("Convert", "opset1"))
    assert main(["selftest", "--provider", "cpu", "-k", "convert/"]) == 0
    assert main(["selftest", "--provider", "cpu", "-k", "convert/", "--strict"]) == 1
    out = capsys.readouterr().out
    _, rows = _table(out)
    assert rows["Convert-opset1"][2:] == ["no lowering", "no lowering", "-"]
    assert "not run (missing: lowering of Convert-opset1)" in out


def test_selftest_whole_table_runs(tmp_path):
    from ir2onnx import selftest

    columns, results = selftest.run("all", openvino=True)
    assert columns[:2] == ["spec", "ort:cpu"] and columns[-1] == "openvino"
    assert len(results) == len(selftest.all_cases())
    for r in results:
        assert set(r.cells) == set(columns), r.case.name
        if not provider_status("cuda")[0]:
            assert r.cells["ort:cuda"] == "unavailable", r.case.name
        if r.case.invalid and r.cells["ort:cpu"] not in ("no lowering", "no oracle"):
            assert r.cells["ort:cpu"] == "pass", (r.case.name, r.notes)  # the converter refused it
    core = [r for r in results if r.case.name.startswith(("core/", "convert/"))]
    assert core and all(not r.failed for r in core)


# -- every sample ---------------------------------------------------------------------------------
def _sample_files(xml, names):
    """``STEM_NAME.npy`` or ``NAME.npy`` beside the sample, for each name that has one."""
    found = {}
    for name in names:
        for f in (xml.with_name(f"{xml.stem}_{name}.npy"), xml.with_name(f"{name}.npy")):
            if f.is_file():
                found[name] = np.load(f)
                break
    return found


def test_check_passes_on_every_sample():
    from pathlib import Path

    from ir2onnx.oracles.interpreter import input_name, output_names, parameters

    samples_root = Path(__file__).resolve().parent.parent / "samples"
    samples = sorted(samples_root.rglob("*.xml"))
    assert samples, "samples/ holds no IR"
    with_openvino = 0
    for xml in samples:
        graph = load_ir(xml)
        given = _sample_files(xml, [input_name(p) for p in parameters(graph)])
        # samples/framework/: where OpenVINO's runtime differs from the framework, whose outputs
        # lie beside the IR (the truth, compared below); OpenVINO is not compared there
        known_deviation = "framework" in xml.relative_to(samples_root).parts
        result = assert_check(graph, inputs=given, providers="all", require=("ort:cpu", "oracle"),
                              openvino=not known_deviation)
        ov = result.backend("openvino")
        if not known_deviation:
            assert ov.status in ("ok", "refused"), (xml, ov.message)  # refused: IR OpenVINO cannot read
            with_openvino += ov.status == "ok"
        expected = _sample_files(xml, list(output_names(graph).values()))
        for name, want in expected.items():  # the sample's own expected outputs, where it has them
            np.testing.assert_allclose(result.backend("oracle").outputs[name], want, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{xml}: {name}")
    assert with_openvino >= len(samples) // 2


def test_scalar_integer_outputs_compare(tmp_path):
    """Regression (fuzzing): comparing 0-d integer outputs crashed check with a TypeError
    (numpy turned the 0-d difference into a scalar); now they pass, or fail with a count."""
    xml = _convert_model(tmp_path, shape=())
    result = ir2onnx.check(xml, inputs={"x": np.array(2.5, np.float32)})
    assert result.ok and result.compared == 3
    c = compare("y", "a", np.array(3, np.int32), "b", np.array(5, np.int32), None, None, False)
    assert not c.passed and c.mismatches == 1 and c.max_abs == 2.0


def test_openvino_runs_isolated_for_the_cli(tmp_path, monkeypatch):
    """`ir2onnx check` runs OpenVINO in a child process: the same outputs, and a crash of that
    process (OpenVINO's compile_model aborts on a few edge models) is reported as the openvino
    backend's error instead of ending the check. The crash is simulated by a sitecustomize that
    kills the child at start-up."""
    import os
    import signal as sig
    from pathlib import Path

    from ir2onnx.harness.check import check
    from ir2onnx.testing import assert_bitexact

    xml = Path(__file__).resolve().parent.parent / "samples" / "decoder" / "decoder.xml"
    x = np.load(xml.parent / "x.npy")
    inline = check(xml, inputs={"x": x})
    isolated = check(xml, inputs={"x": x}, isolate_openvino=True)
    assert isolated.ok
    assert_bitexact(isolated.backend("openvino").outputs["y"], inline.backend("openvino").outputs["y"])

    (tmp_path / "sitecustomize.py").write_text(f"import os\nos.kill(os.getpid(), {int(sig.SIGSEGV)})\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    crashed = check(xml, inputs={"x": x}, isolate_openvino=True)
    ov = crashed.backend("openvino")
    assert ov.status == "error" and "crashed the process (SIGSEGV)" in ov.message
    assert not crashed.ok and any("openvino" in f for f in crashed.failures())
    assert crashed.backend("ort:cpu").status == "ok" and crashed.backend("oracle").status == "ok"
