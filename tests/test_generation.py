"""Range-4 on OpenVINO-written IR: run-time and constant start/stop/step, integer and float
output types, the spec's three worked examples; against the oracle and the OpenVINO runtime.
Eye-9 below."""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino


def _range_ir(tmp_path, in_dtype, out_type):
    names = ("start", "stop", "step")
    params = [ov_parameter([], in_dtype, n) for n in names]
    return ov_save(tmp_path / "r.xml", ops.range(*params, out_type), params)


def _feeds(values, dtype):
    return {n: np.array(v, dtype) for n, v in zip(("start", "stop", "step"), values)}


@pytest.mark.parametrize("values,expected", [((2, 23, 3), [2, 5, 8, 11, 14, 17, 20]),
                                             ((23, 2, -3), [23, 20, 17, 14, 11, 8, 5]), ((5, 5, 1), []),
                                             ((0, -3, 1), [])])
@pytest.mark.parametrize("dtype,out", [(np.int32, "i32"), (np.int64, "i64"), (np.int64, "i32"), (np.int32, "u8")])
def test_integer(tmp_path, values, expected, dtype, out):
    """Range-4 examples 1 and 2 (specs), plus empty ranges."""
    if out == "u8" and min(values) < 0:  # u8 cannot hold the negative values: an ascending range
        values, expected = (5, 26, 3), [5, 8, 11, 14, 17, 20, 23]
    xml = _range_ir(tmp_path, dtype, out)
    feeds = _feeds(values, dtype)
    got = run_onnx(xml, feeds)[0]
    assert got.tolist() == expected and got.dtype == np.dtype({"i32": np.int32, "i64": np.int64, "u8": np.uint8}[out])
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())))
    if values == (0, -3, 1):
        return  # OpenVINO 2026.4's CPU plugin gives [0, 1, 2] here (measured); the spec: empty
    assert_bitexact(got, run_openvino(xml, feeds)[0])


@pytest.mark.parametrize("values", [(1, 2.5, 0.5), (0.5, -2, -0.75), (-1, 1, 0.1)])
@pytest.mark.parametrize("out", ["f32", "f16"])
def test_float(tmp_path, values, out):
    """Range-4 example 3 (specs) and fractional steps."""
    xml = _range_ir(tmp_path, np.float32, out)
    feeds = _feeds(values, np.float32)
    got = run_onnx(xml, feeds)[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    tol = 1e-6 if out == "f32" else 1e-3
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], rtol=tol, atol=tol)
    if values == (1, 2.5, 0.5):
        assert got.tolist() == [1.0, 1.5, 2.0]


def test_float_inputs_truncate_for_integer_output(tmp_path):
    """Inputs are cast to output_type toward zero first: (-2.7, 7.9, 2.5) -> range(-2, 7, 2)."""
    xml = _range_ir(tmp_path, np.float32, "i32")
    feeds = _feeds((-2.7, 7.9, 2.5), np.float32)
    got = run_onnx(xml, feeds)[0]
    assert got.tolist() == [-2, 0, 2, 4, 6]
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())))
    # OpenVINO 2026.4's CPU plugin deviates (measured): it steps in float and rounds each value
    # to nearest, [-3, 0, 2, 5, 7]; the spec's text (followed here) casts toward zero first
    assert run_openvino(xml, feeds)[0].tolist() == [-3, 0, 2, 5, 7]
    whole = _feeds((-2, 7, 2), np.float32)  # where the inputs are whole numbers the two agree
    assert_bitexact(run_onnx(xml, whole)[0], run_openvino(xml, whole)[0])


def test_constant_range_folds_and_dynamic_stop(tmp_path):
    """Positions 0..n-1 of a sequence of run-time length n (ShapeOf -> Gather -> Range)."""
    x = ov_parameter([1, None], np.int64, "x")
    n = ops.gather(ops.shape_of(x), ops.constant(np.int64(1)), ops.constant(np.int64(0)))
    pos = ops.range(ops.constant(np.int64(0)), n, ops.constant(np.int64(1)), "i64")
    folded = ops.range(ops.constant(np.int64(0)), ops.constant(np.int64(3)), ops.constant(np.int64(1)), "i64")
    xml = ov_save(tmp_path / "p.xml", [ops.add(x, pos), ops.reduce_sum(folded, ops.constant(np.int64(0)))], [x])
    model = convert(xml)
    assert sum(n.op_type == "Range" for n in model.graph.node) == 1
    feeds = {"x": np.full((1, 5), 10, np.int64)}
    got = run_onnx(xml, feeds)
    assert got[0].tolist() == [[10, 11, 12, 13, 14]] and got[1].tolist() == 3
    for g, o in zip(got, run_openvino(xml, feeds)):
        assert_bitexact(g, o)


def test_zero_step_is_invalid(tmp_path):
    w = IRWriter()
    x = w.parameter([2], "i64", "x")
    r = w.layer("Range", "opset4", [w.const(np.int64(0)), w.const(np.int64(5)), w.const(np.float32(0.5))],
                {"output_type": "i64"}, [("i64", [None])], name="rg")[0]
    w.result(w.layer("Add", "opset1", [x, r], {"auto_broadcast": "numpy"}, [("i64", [2])])[0])
    with pytest.raises(InvalidLayer, match="rg.*step is zero"):
        convert(w.save(tmp_path / "bad.xml"))


# -- Eye-9 -----------------------------------------------------------------------------------
# On OpenVINO-written IR against the oracle and OpenVINO: bit-exact.
def _oracle(xml, feeds):
    return list(evaluate(ir2onnx.load_ir(xml), feeds).values())


def _save_const_model(path, node):
    ov.save_model(ov.Model([ops.result(node)], [], path.stem), str(path))
    return path


@pytest.mark.parametrize("rows,cols,diag,batch,otype", [
    (3, 4, 2, None, "i32"), (3, 4, -1, None, "i32"), (2, 2, 5, [1, 2], "f16"),  # the spec's examples
    (4, 4, 0, None, "f32"), (3, 5, -7, [2], "i64"), (2, 3, 1, [2, 1], "boolean"), (0, 3, 0, None, "f32")])
def test_eye_constant_folds(tmp_path, rows, cols, diag, batch, otype):
    args = [ops.constant(np.int64(rows)), ops.constant(np.array([cols], np.int32)), ops.constant(np.int64(diag)), otype]
    if batch is not None:
        args.append(ops.constant(np.array(batch, np.int64)))
    path = _save_const_model(tmp_path / "eye.xml", ops.eye(*args))
    got = run_onnx(path, {})[0]
    want = np.broadcast_to(np.eye(rows, cols, diag), tuple(batch or ()) + (rows, cols))
    assert_bitexact(got, want.astype(got.dtype))
    assert_bitexact(got, _oracle(path, {})[0])
    assert_bitexact(got, run_openvino(path, {})[0])
    assert [n.op_type for n in convert(path).graph.node] == ["Identity"]


@pytest.mark.parametrize("otype", ["f32", "i32", "f16"])
def test_eye_runtime_sizes(tmp_path, otype):
    n = ov_parameter((), np.int32, "n")
    m = ov_parameter((1,), np.int64, "m")
    k = ov_parameter((), np.int64, "k")
    b = ov_parameter((2,), np.int32, "b")
    xml = ov_save(tmp_path / "eye_rt.xml", ops.eye(n, m, k, otype, b), [n, m, k, b])
    for rows, cols, diag, batch in [(3, 4, 1, [2, 1]), (4, 2, -2, [1, 3]), (2, 2, 9, [1, 1]), (5, 3, -1, [0, 2])]:
        feeds = {"n": np.array(rows, np.int32), "m": np.array([cols], np.int64), "k": np.array(diag, np.int64),
                 "b": np.array(batch, np.int32)}
        got = run_onnx(xml, feeds)[0]
        assert_bitexact(got, _oracle(xml, feeds)[0], f"{rows},{cols},{diag},{batch}")
        assert_bitexact(got, run_openvino(xml, feeds)[0])


def test_eye_negative_rows_is_invalid(tmp_path):
    w = IRWriter("eye_bad")
    r, c, d = w.const(np.int64(-1)), w.const(np.int64(2)), w.const(np.int64(0))
    y = w.layer("Eye", "opset9", [r, c, d], {"output_type": "f32"}, [("f32", (0, 2))])[0]
    w.result(y)
    xml = w.save(tmp_path / "eye_bad.xml")
    with pytest.raises(InvalidLayer, match="num_rows is negative"):
        convert(xml)
