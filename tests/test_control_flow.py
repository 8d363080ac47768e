"""If-8, Loop-5 and TensorIterator-1 on IR written by OpenVINO: onnxruntime, the oracle and
OpenVINO agree; the ONNX graph has the control flow it should; a torch-made If matches torch."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

import ir2onnx
from ir2onnx.selftest.cases import ov_build
from ir2onnx.selftest.control_flow import if_model, loop_model, rnn_model, sliced_loop_model
from ir2onnx.testing import assert_check, run_onnx, run_openvino

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _build(tmp_path, make, compress=False):
    return ov_build(make, compress=compress)(tmp_path)


def _ops(model: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in model.graph.node]


def test_if_runtime_condition_takes_both_branches(tmp_path):
    xml = _build(tmp_path, if_model())
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    for c, want in ((True, x * 2), (False, -x)):
        got = run_onnx(xml, {"x": x, "c": np.array(c)})[0]
        np.testing.assert_array_equal(got, want)
        assert_check(xml, inputs={"x": x, "c": np.array(c)})
    assert "If" in _ops(ir2onnx.convert(xml))


def test_if_constant_condition_is_folded_to_one_branch(tmp_path):
    xml = _build(tmp_path, if_model(const_cond=True))
    model = ir2onnx.convert(xml)
    assert "If" not in _ops(model) and "Neg" not in _ops(model) and "Mul" in _ops(model)
    assert_check(xml, shapes={"x": (3, 3)})


def test_if_from_torch_script_matches_torch():
    """samples/make_torch_if.py: `if x.sum() > 0` through torch.jit.script and convert_model."""
    folder = SAMPLES / "torch_if"
    xml = folder / "torch_if.xml"
    for sign in ("pos", "neg"):
        x, want = np.load(folder / f"x_{sign}.npy"), np.load(folder / f"y_{sign}.npy")
        got = run_onnx(xml, {"x.1": x})[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, run_openvino(xml, {"x.1": x})[0], rtol=1e-5, atol=1e-6)
        assert_check(xml, inputs={"x.1": x})


def _loop_reference(x, trip):
    acc, every = np.zeros((1, 3), np.float32), []
    for i in range(trip):
        acc = acc + x * np.float32(i)
        every.append(acc)
    return acc, np.concatenate(every, 0)


def test_loop_trip_count_concatenates_every_iteration(tmp_path):
    xml = _build(tmp_path, loop_model(4))
    x = np.array([[1.0, -2.0, 0.5]], np.float32)
    last, every = run_onnx(xml, {"x": x})
    want_last, want_every = _loop_reference(x, 4)
    np.testing.assert_allclose(last, want_last, rtol=1e-6)
    np.testing.assert_allclose(every, want_every, rtol=1e-6)
    assert "Loop" in _ops(ir2onnx.convert(xml))
    assert_check(xml, inputs={"x": x})


def test_loop_stops_on_the_execution_condition(tmp_path):
    xml = _build(tmp_path, loop_model(10, stop_at=3))
    x = np.ones((1, 3), np.float32)
    every = run_onnx(xml, {"x": x})[1]
    assert every.shape == (3, 3)
    np.testing.assert_allclose(every, _loop_reference(x, 3)[1])
    assert_check(xml, inputs={"x": x})


def test_loop_trip_count_is_a_runtime_input(tmp_path):
    xml = _build(tmp_path, loop_model(runtime_trip=True))
    x = np.array([[3.0, 1.0, -1.0]], np.float32)
    for trip in (1, 2, 5):
        every = run_onnx(xml, {"x": x, "trip": np.array(trip, np.int64)})[1]
        np.testing.assert_allclose(every, _loop_reference(x, trip)[1])
    for trip in (3, 0):
        assert_check(xml, inputs={"x": x, "trip": np.array(trip, np.int64)})
    last, every = run_onnx(xml, {"x": x, "trip": np.array(0, np.int64)})
    assert every.shape == (0, 3) and not last.any()  # zero iterations: the initial value


def test_loop_trip_count_minus_one_runs_until_the_condition(tmp_path):
    xml = _build(tmp_path, loop_model(stop_at=3, runtime_trip=True))
    x = np.array([[3.0, 1.0, -1.0]], np.float32)
    every = run_onnx(xml, {"x": x, "trip": np.array(-1, np.int64)})[1]
    np.testing.assert_allclose(every, _loop_reference(x, 3)[1])
    assert_check(xml, inputs={"x": x, "trip": np.array(-1, np.int64)})


def _rnn_reference(x, h, reverse, seed=1):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((3, 4)).astype(np.float32).astype(np.float16).astype(np.float32)
    r = (rng.standard_normal((4, 4)).astype(np.float32) * 0.5).astype(np.float16).astype(np.float32)
    steps = range(x.shape[1] - 1, -1, -1) if reverse else range(x.shape[1])
    every = []
    for t in steps:
        h = np.tanh(x[:, t] @ w + h @ r)
        every.append(h)
    return h, np.stack(every, 1)


def test_tensor_iterator_rnn_body_forward_and_reverse(tmp_path):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 3)).astype(np.float32)
    h = rng.standard_normal((2, 4)).astype(np.float32)
    for reverse in (False, True):
        xml = _build(tmp_path / str(reverse), rnn_model(reverse=reverse), compress=True)
        last, every = run_onnx(xml, {"x": x, "h": h})
        want_last, want_every = _rnn_reference(x, h, reverse)
        np.testing.assert_allclose(last, want_last, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(every, want_every, rtol=1e-5, atol=1e-5)
        assert_check(xml, inputs={"x": x, "h": h})


def test_tensor_iterator_batch_is_dynamic(tmp_path):
    xml = _build(tmp_path, rnn_model(), compress=True)
    for batch in (1, 3):
        assert_check(xml, shapes={"x": (batch, 5, 3), "h": (batch, 4)})


def test_loop_with_an_if_inside_from_torch_script_matches_torch():
    """samples/make_torch_loop.py: `for t in range(x.shape[1])` (a run-time trip count) around
    `if h.sum() > 0`: a Loop-5 whose body holds an If-8."""
    folder = SAMPLES / "torch_loop"
    xml = folder / "torch_loop.xml"
    model = ir2onnx.convert(xml)
    loop = next(n for n in model.graph.node if n.op_type == "Loop")
    body = next(a.g for a in loop.attribute if a.name == "body")
    assert "If" in [n.op_type for n in body.node]
    x = np.load(folder / "x.1.npy")
    h, every = run_onnx(xml, {"x.1": x})
    np.testing.assert_allclose(h, np.load(folder / "h.npy"), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(every, np.load(folder / "every.npy"), rtol=1e-5, atol=1e-6)
    assert_check(xml, inputs={"x.1": x})
    assert_check(xml, inputs={"x.1": x[:, :2]})  # another trip count, same model


def test_if_branches_of_different_shapes(tmp_path):
    """then: x twice along axis 0 ([2n, 3]); else: x[:, :2] ([n, 2]): the If output's shape is
    what both branches agree on (rank 2), and each branch runs with its own shape."""
    import openvino as ov
    import openvino.opset15 as ops

    from ir2onnx.testing import ov_parameter, ov_save

    x, c = ov_parameter([None, 3]), ov_parameter([], np.bool_, "c")
    node = ops.if_op(c)
    tx, ex = ops.parameter([-1, 3], np.float32), ops.parameter([-1, 3], np.float32)
    tr = ops.result(ops.concat([tx, tx], 0))
    cut = [ops.constant(np.array([v])) for v in (0, 2, 1, 1)]
    er = ops.result(ops.slice(ex, *cut))
    node.set_then_body(ov.Model([tr], [tx]))
    node.set_else_body(ov.Model([er], [ex]))
    node.set_input(x.output(0), tx, ex)
    xml = ov_save(tmp_path / "m.xml", node.set_output(tr, er), [x, c])
    out = ir2onnx.convert(xml).graph.output[0].type.tensor_type.shape
    assert len(out.dim) == 2 and not any(d.HasField("dim_value") for d in out.dim)
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    for cond, want in ((True, np.concatenate([v, v])), (False, v[:, :2])):
        np.testing.assert_array_equal(run_onnx(xml, {"x": v, "c": np.array(cond)})[0], want)
        assert_check(xml, inputs={"x": v, "c": np.array(cond)})


def test_loop_over_slices_of_an_input(tmp_path):
    """Loop-5 with a sliced input (axis 1) and a last-iteration output that is no back edge;
    a trip count beyond the slices (or -1) stops at the last slice (OpenVINO's CPU plugin
    raises there instead, so it is compared only within the slices)."""
    xml = _build(tmp_path, sliced_loop_model())
    x = np.random.default_rng(2).standard_normal((2, 4, 3)).astype(np.float32)
    acc, every = np.zeros((2, 1, 3), np.float32), []
    for t in range(4):
        acc = 2 * acc + x[:, t:t + 1]
        every.append(acc)
    for trip in (1, 3, 4):
        last, got_every, last_i = run_onnx(xml, {"x": x, "trip": np.array(trip)})
        np.testing.assert_allclose(last, every[trip - 1], rtol=1e-6)
        np.testing.assert_allclose(got_every, np.concatenate(every[:trip], 1), rtol=1e-6)
        assert last_i == trip - 1
        assert_check(xml, inputs={"x": x, "trip": np.array(trip)})
    for trip in (9, -1):
        result = assert_check(xml, inputs={"x": x, "trip": np.array(trip)}, openvino=False,
                              require=("ort:cpu", "oracle"))
        assert result.backend("ort:cpu").outputs["every"].shape == (2, 4, 3)


def _lstm_cell_ti(hidden=4, inputs=3, seed=7):
    """A TensorIterator over an LSTMCell-4, as older Open Model Zoo text and speech IRs hold it:
    the time axis 1 of x sliced one step at a time, h and c carried, every h concatenated."""
    def make(ops):
        import openvino as ov
        import openvino.opset4 as o4

        rng = np.random.default_rng(seed)
        w, r = (rng.standard_normal((4 * hidden, n)).astype(np.float32) * 0.5 for n in (inputs, hidden))
        b = rng.standard_normal(4 * hidden).astype(np.float32) * 0.1
        x = ops.parameter([-1, 6, inputs], np.float32, name="x")
        h0, c0 = (ops.parameter([-1, hidden], np.float32, name=n) for n in ("h", "c"))
        for p, n in ((x, "x"), (h0, "h"), (c0, "c")):
            p.output(0).get_tensor().set_names({n})
        node = ops.tensor_iterator()
        bx = ops.parameter([-1, 1, inputs], np.float32)
        bh, bc = ops.parameter([-1, hidden], np.float32), ops.parameter([-1, hidden], np.float32)
        xt = ops.squeeze(bx, ops.constant(np.array([1], np.int64)))
        cell = o4.lstm_cell(xt, bh, bc, ops.constant(w), ops.constant(r), ops.constant(b), hidden)
        rh, rc = ops.result(cell.output(0)), ops.result(cell.output(1))
        rall = ops.result(ops.unsqueeze(cell.output(0), ops.constant(np.array([1], np.int64))))
        node.set_body(ov.Model([rh, rc, rall], [bx, bh, bc]))
        node.set_sliced_input(bx, x.output(0), 0, 1, 1, -1, 1)
        node.set_merged_input(bh, h0.output(0), rh.output(0))
        node.set_merged_input(bc, c0.output(0), rc.output(0))
        every = node.get_concatenated_slices(rall.output(0), 0, 1, 1, -1, 1)
        return [(every, "h_all"), (node.get_iter_value(rc.output(0), -1), "c_last")], [x, h0, c0]
    return make


def test_tensor_iterator_over_an_lstm_cell(tmp_path):
    """Issue 14's TensorIterator over an LSTMCell (f16-compressed weights, dynamic batch): a Loop
    whose body is a one-step ONNX LSTM; onnxruntime, the oracle and OpenVINO agree at two batch
    sizes, and onnxruntime matches a NumPy LSTM (gates i, f, c, o; sigmoid/tanh)."""
    xml = _build(tmp_path, _lstm_cell_ti(), compress=True)
    model = ir2onnx.convert(xml)
    assert "Loop" in _ops(model)
    body = next(a.g for n in model.graph.node if n.op_type == "Loop" for a in n.attribute if a.name == "body")
    assert "LSTM" in [n.op_type for n in body.node]
    rng = np.random.default_rng(8)
    for batch in (1, 3):
        feeds = {"x": rng.standard_normal((batch, 6, 3)).astype(np.float32),
                 "h": rng.standard_normal((batch, 4)).astype(np.float32),
                 "c": rng.standard_normal((batch, 4)).astype(np.float32)}
        assert_check(xml, inputs=feeds)
        body_graph = next(b.graph for l in ir2onnx.load_ir(xml).order for b in l.bodies.values())
        consts = {tuple(l.const.array().shape): l.const.array().astype(np.float32)
                  for l in body_graph.order if l.type == "Const"}  # the f16-compressed weights
        w, r, b = consts[(16, 3)], consts[(16, 4)], consts[(16,)]
        h, c, every = feeds["h"], feeds["c"], []
        sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
        for t in range(6):
            z = feeds["x"][:, t] @ w.T + h @ r.T + b
            i, f, cc, o = np.split(z, 4, axis=1)  # OpenVINO's LSTMCell-4 gate order: f, i, c, o
            f, i = i, f
            c = sig(f) * c + sig(i) * np.tanh(cc)
            h = sig(o) * np.tanh(c)
            every.append(h)
        got_all, got_c = run_onnx(xml, feeds)
        np.testing.assert_allclose(got_all, np.stack(every, 1), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(got_c, c, rtol=1e-4, atol=1e-5)
