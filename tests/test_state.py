"""ReadValue/Assign on IR written by OpenVINO: the converted model takes each variable as an input
and returns `<variable_id>.new`; fed back step by step it matches OpenVINO's stateful inference
(reset_state, then repeated infer), the oracle and numpy."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

import ir2onnx
from ir2onnx.cli.main import main
from ir2onnx.selftest.state import counter3, kv_decoder, no_init6, stateful_build
from ir2onnx.testing import IRWriter, assert_check

D = 4


def _decoder_reference(x, steps, layers=2, seed=0):
    """numpy: the same decoder (f16-rounded weights), its caches kept in a list."""
    rng = np.random.default_rng(seed)
    weights = [{k: (rng.standard_normal((D, D)) / np.sqrt(D)).astype(np.float32)
                .astype(np.float16).astype(np.float32) for k in ("q", "k", "v", "o")}
               for _ in range(layers)]
    caches = [[np.zeros((x.shape[0], 0, D), np.float32)] * 2 for _ in range(layers)]
    ys = []
    for _ in range(steps):
        h = x
        for l, w in enumerate(weights):
            q, k, v = h @ w["q"], h @ w["k"], h @ w["v"]
            caches[l] = [np.concatenate([caches[l][0], k], 1), np.concatenate([caches[l][1], v], 1)]
            s = q @ caches[l][0].transpose(0, 2, 1) / np.float32(np.sqrt(D))
            p = np.exp(s - s.max(-1, keepdims=True))
            h = h + (p / p.sum(-1, keepdims=True)) @ caches[l][1] @ w["o"]
        ys.append(h)
    return ys


def test_kv_decoder_matches_openvino_step_by_step(tmp_path):
    xml = stateful_build(kv_decoder(), compress=True)(tmp_path)
    x = np.random.default_rng(5).standard_normal((2, 1, D)).astype(np.float32)
    result = assert_check(xml, inputs={"x": x}, steps=4)
    names = {o.name for o in result.outputs}
    assert {f"y@{k}" for k in range(1, 5)} | {f"v_cache_1.new@{k}" for k in range(1, 5)} <= names
    for k in range(1, 5):  # the cache grows by one token a step, on every backend
        for b in result.backends:
            assert b.outputs[f"k_cache_0.new@{k}"].shape == (2, k, D), b.name
    ort_out = result.backend("ort:cpu").outputs
    for k, want in enumerate(_decoder_reference(x, 4), start=1):
        np.testing.assert_allclose(ort_out[f"y@{k}"], want, rtol=1e-5, atol=1e-5)


def test_converted_decoder_takes_the_caches_as_inputs(tmp_path):
    """The README's convention: the caller feeds zeros with a 0-length sequence axis first."""
    xml = stateful_build(kv_decoder(), compress=True)(tmp_path)
    model = ir2onnx.convert(xml)
    caches = [f"{n}_cache_{l}" for l in range(2) for n in ("k", "v")]
    inputs = [i.name for i in model.graph.input]
    assert inputs[0] == "x" and sorted(inputs[1:]) == sorted(caches)
    assert [o.name for o in model.graph.output] == ["y"] + [c + ".new" for c in inputs[1:]]
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(6).standard_normal((1, 1, D)).astype(np.float32)
    state = {c: np.zeros((1, 0, D), np.float32) for c in caches}
    want = _decoder_reference(x, 3)
    for k in range(3):
        out = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {"x": x, **state})))
        state = {c: out[c + ".new"] for c in caches}
        np.testing.assert_allclose(out["y"], want[k], rtol=1e-5, atol=1e-5)
    assert state["v_cache_1"].shape == (1, 3, D)


def test_read_value3_constant_init_and_read_value6_without_init(tmp_path):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    r = assert_check(stateful_build(counter3())(tmp_path / "a"), inputs={"x": x}, steps=3)
    np.testing.assert_allclose(r.backend("ort:cpu").outputs["y@3"], 1 + 3 * x)
    r = assert_check(stateful_build(no_init6())(tmp_path / "b"), inputs={"x": x}, steps=3)
    np.testing.assert_allclose(r.backend("ort:cpu").outputs["y@3"], x * 1.75)


def test_run_builds_the_initial_state_and_drives_steps(capsys, tmp_path):
    xml = stateful_build(counter3())(tmp_path)
    x = np.full((2, 3), 2.0, np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out.npz"
    assert main(["run", str(xml), "--input", f"x={tmp_path / 'x.npy'}", "--steps", "3",
                 "--save", str(out)]) == 0
    saved = np.load(out)
    assert sorted(saved.files) == sorted(f"{n}@{k}" for n in ("y", "total.new") for k in (1, 2, 3))
    np.testing.assert_array_equal(saved["y@3"], 1 + 3 * x)
    assert "output y@2" in capsys.readouterr().out


def _state_ir(tmp_path, second_assign=False, assign_other=False):
    w = IRWriter("st")
    x = w.parameter([2, 3], "f32", "x")
    rv = w.layer("ReadValue", "opset6", [w.const(np.zeros((2, 3), np.float32))],
                 {"variable_id": "v", "variable_type": "f32", "variable_shape": "2,3"}, [("f32", (2, 3))])[0]
    y = w.layer("Add", "opset1", [rv, x], {"auto_broadcast": "numpy"}, [("f32", (2, 3))], out_names=["y"])[0]
    w.layer("Assign", "opset6", [y], {"variable_id": "w" if assign_other else "v"}, [("f32", (2, 3))])
    if second_assign:
        w.layer("Assign", "opset6", [x], {"variable_id": "v"}, [("f32", (2, 3))])
    w.result(y)
    return w.save(tmp_path / "st.xml")


def _refused(capsys, tmp_path, xml, text):
    code = main(["convert", str(xml), "-o", str(tmp_path / "o.onnx")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and text in err, err
    assert not (tmp_path / "o.onnx").exists()


def test_bad_state_is_refused(capsys, tmp_path):
    assert main(["convert", str(_state_ir(tmp_path)), "-o", str(tmp_path / "ok.onnx")]) == 0
    capsys.readouterr()
    _refused(capsys, tmp_path, _state_ir(tmp_path, second_assign=True), "variable 'v' is assigned twice")
    _refused(capsys, tmp_path, _state_ir(tmp_path, assign_other=True), "no ReadValue reads variable 'w'")


def test_check_command_drives_the_steps(capsys, tmp_path):
    """`ir2onnx check` (OpenVINO in its child process) compares every step and variable."""
    xml = stateful_build(kv_decoder(layers=1))(tmp_path)
    assert main(["check", str(xml), "--shape", "x=1,1,4"]) == 0
    out = capsys.readouterr().out
    for k in range(1, 5):
        assert f"output 'y@{k}'" in out and f"output 'k_cache_0.new@{k}'  shape [1,{k},4]" in out


def test_state_init_is_the_first_step_alone(tmp_path):
    """convert_graph(state="init"): no state inputs, each ReadValue its init value computed in the
    graph; the outputs are those of the first step of the stateful model (optimum's decoder
    without past, docs/optimum.md)."""
    from ir2onnx.errors import Ir2OnnxError
    from ir2onnx.ir.reader import load_ir
    from ir2onnx.lowering.convert import convert_graph
    from ir2onnx.writer import save

    xml = stateful_build(kv_decoder(), compress=True)(tmp_path)
    conv = convert_graph(load_ir(xml), state="init")
    assert [i.name for i in conv.model.graph.input] == ["x"]
    sess = ort.InferenceSession(str(save(conv, tmp_path / "first.onnx")), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(7).standard_normal((3, 1, D)).astype(np.float32)
    out = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {"x": x})))
    np.testing.assert_allclose(out["y"], _decoder_reference(x, 1)[0], rtol=1e-5, atol=1e-5)
    assert out["k_cache_1.new"].shape == (3, 1, D)
    with pytest.raises(Ir2OnnxError, match="state=.both."):
        convert_graph(load_ir(xml), state="both")
