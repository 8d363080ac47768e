"""Pad-1/-12 (constant, edge, reflect, symmetric; negative pads in Pad-12) on OpenVINO-written IR
and the spec's worked examples: bit for bit against the oracle and the OpenVINO runtime."""
from __future__ import annotations

import numpy as np
import openvino.opset1 as ops1
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

MODES = ["constant", "edge", "reflect", "symmetric"]
DATA = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
# Pad-12's worked examples (specs: pads_begin [0, 1] / pads_end [2, 3], and mixed [2, -1] / [-1, 3])
POSITIVE = {
    "constant": [[0, 1, 2, 3, 4, 0, 0, 0], [0, 5, 6, 7, 8, 0, 0, 0], [0, 9, 10, 11, 12, 0, 0, 0],
                 [0] * 8, [0] * 8],
    "edge": [[1, 1, 2, 3, 4, 4, 4, 4], [5, 5, 6, 7, 8, 8, 8, 8], [9, 9, 10, 11, 12, 12, 12, 12],
             [9, 9, 10, 11, 12, 12, 12, 12], [9, 9, 10, 11, 12, 12, 12, 12]],
    "reflect": [[2, 1, 2, 3, 4, 3, 2, 1], [6, 5, 6, 7, 8, 7, 6, 5], [10, 9, 10, 11, 12, 11, 10, 9],
                [6, 5, 6, 7, 8, 7, 6, 5], [2, 1, 2, 3, 4, 3, 2, 1]],
    "symmetric": [[1, 1, 2, 3, 4, 4, 3, 2], [5, 5, 6, 7, 8, 8, 7, 6], [9, 9, 10, 11, 12, 12, 11, 10],
                  [9, 9, 10, 11, 12, 12, 11, 10], [5, 5, 6, 7, 8, 8, 7, 6]],
}
MIXED = {
    "constant": [[0] * 6, [0] * 6, [2, 3, 4, 0, 0, 0], [6, 7, 8, 0, 0, 0]],
    "edge": [[2, 3, 4, 4, 4, 4], [2, 3, 4, 4, 4, 4], [2, 3, 4, 4, 4, 4], [6, 7, 8, 8, 8, 8]],
    "reflect": [[10, 11, 12, 11, 10, 9], [6, 7, 8, 7, 6, 5], [2, 3, 4, 3, 2, 1], [6, 7, 8, 7, 6, 5]],
    "symmetric": [[6, 7, 8, 8, 7, 6], [2, 3, 4, 4, 3, 2], [2, 3, 4, 4, 3, 2], [6, 7, 8, 8, 7, 6]],
}


def _pad_ir(tmp_path, begins, ends, mode, shape=(3, 4), dtype=np.float32, value=None, opset=ops):
    x = ov_parameter(shape, dtype, "x")
    c = lambda v: ops.constant(np.array(v, np.int64))  # noqa: E731
    args = [x, c(begins), c(ends), mode] + ([ops.constant(np.array(value, dtype))] if value is not None else [])
    return ov_save(tmp_path / "p.xml", opset.pad(*args), [x])


def _check(xml, x, expected=None, openvino=True):
    got = run_onnx(xml, {"x": x})[0]
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values())), "onnxruntime vs oracle")
    if openvino:
        assert_bitexact(got, run_openvino(xml, {"x": x})[0], "onnxruntime vs OpenVINO")
    if expected is not None:
        assert_bitexact(got, np.asarray(expected, x.dtype), "onnxruntime vs the spec")
    return got


@pytest.mark.parametrize("mode", MODES)
def test_spec_positive(tmp_path, mode):
    _check(_pad_ir(tmp_path, [0, 1], [2, 3], mode), DATA, POSITIVE[mode])


@pytest.mark.parametrize("mode", MODES)
def test_spec_mixed(tmp_path, mode):
    _check(_pad_ir(tmp_path, [2, -1], [-1, 3], mode), DATA, MIXED[mode])


@pytest.mark.parametrize("mode", MODES)
def test_spec_negative(tmp_path, mode):
    _check(_pad_ir(tmp_path, [-1, -1], [-1, -1], mode), DATA, [[6, 7]])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_pad1_3d(tmp_path, mode, dtype):
    x = np.arange(2 * 3 * 4).astype(dtype).reshape(2, 3, 4)
    xml = _pad_ir(tmp_path, [1, 0, 2], [0, 2, 3], mode, (2, 3, 4), dtype, opset=ops1)
    assert 'version="opset1"' in xml.read_text()
    _check(xml, x)


def test_pad_value_and_dynamic_dims(tmp_path):
    xml = _pad_ir(tmp_path, [1, 0], [0, -1], "constant", (None, 4), value=-2.5)
    x = DATA
    _check(xml, x, np.pad(x, [(1, 0), (0, 0)], constant_values=-2.5)[:, :3])


def test_edge_on_dynamic_dim(tmp_path):
    xml = _pad_ir(tmp_path, [2, 1], [1, 0], "edge", (None, None))
    _check(xml, DATA, np.pad(DATA, [(2, 1), (1, 0)], mode="edge"))


@pytest.mark.parametrize("mode", MODES)
def test_reflect_symmetric_on_dynamic_dims(tmp_path, mode):
    xml = _pad_ir(tmp_path, [1, -1], [2, 2], mode, (None, None))
    for x in (DATA, np.arange(20, dtype=np.float32).reshape(4, 5)):
        _check(xml, x)


def _run_time_pads_ir(tmp_path, version, mode, etype, value=False):
    """Pad whose pads_begin, pads_end (and pad_value) are Parameters: fed at run time."""
    opset = ops1 if version == "opset1" else ops
    x = ov_parameter([None, None, 3], np.float32, "x")
    pb, pe = ov_parameter([3], etype, "pb"), ov_parameter([3], etype, "pe")
    v = ov_parameter([], np.float32, "v") if value else None
    node = opset.pad(x, pb, pe, mode, *([v] if value else []))
    return ov_save(tmp_path / "rt.xml", node, [x, pb, pe] + ([v] if value else []))


@pytest.mark.parametrize("version", ["opset1", "opset12"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("etype", [np.int32, np.int64])
def test_run_time_pads(tmp_path, version, mode, etype):
    xml = _run_time_pads_ir(tmp_path, version, mode, etype)
    pads = [([1, 0, 2], [0, 2, 1]), ([0, 0, 0], [0, 0, 0])]
    if version == "opset12":  # negative pads crop (after the positive part is padded)
        pads += [([-1, 2, 0], [1, -2, -1]), ([2, -1, -1], [-1, 1, 2])]
    for shape in ((3, 4, 3), (4, 5, 3)):
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        for b, e in pads:
            feeds = {"x": x, "pb": np.array(b, etype), "pe": np.array(e, etype)}
            got = run_onnx(xml, feeds)[0]
            assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), f"oracle {b} {e}")
            assert_bitexact(got, run_openvino(xml, feeds)[0], f"OpenVINO {b} {e}")
            want = np.pad(x, [(max(p, 0), max(q, 0)) for p, q in zip(b, e)], mode=mode)
            crop = tuple(slice(-min(p, 0), want.shape[i] + min(q, 0)) for i, (p, q) in enumerate(zip(b, e)))
            assert_bitexact(got, want[crop], f"numpy {b} {e}")


def test_run_time_pads_and_value(tmp_path):
    xml = _run_time_pads_ir(tmp_path, "opset12", "constant", np.int64, value=True)
    feeds = {"x": DATA.reshape(2, 2, 3), "pb": np.array([0, 1, -1]), "pe": np.array([1, 0, 1]),
             "v": np.array(-7.5, np.float32)}
    got = run_onnx(xml, feeds)[0]
    assert_bitexact(got, run_openvino(xml, feeds)[0], "OpenVINO")
    want = np.pad(DATA.reshape(2, 2, 3), [(0, 1), (1, 0), (0, 1)], constant_values=-7.5)[:, :, 1:]
    assert_bitexact(got, want, "numpy")


def test_constant_input_folds(tmp_path):
    x = ov_parameter([5], np.float32, "x")
    c = lambda v: ops.constant(np.array(v, np.int64))  # noqa: E731
    k = ops.pad(ops.constant(np.array([1, 2, 3], np.float32)), c([1]), c([1]), "reflect")
    xml = ov_save(tmp_path / "f.xml", ops.add(x, k), [x])
    assert [n.op_type for n in convert(xml).graph.node] == ["Add", "Identity"]
    _check(xml, np.zeros(5, np.float32), [2, 1, 2, 3, 2])


@pytest.mark.parametrize("version,mode,begins,ends,match", [
    ("opset12", "reflect", [0, 4], [0, 0], "exceed dim 1"),
    ("opset12", "symmetric", [0, 0], [3, 5], "exceed dim 1"),
    ("opset1", "constant", [0, -1], [0, 0], "must not be negative"),
    ("opset12", "constant", [-2, 0], [-2, 0], "crop more"),
    ("opset12", "edge", [0], [0], "need 2 values"),
])
def test_invalid(tmp_path, version, mode, begins, ends, match):
    w = IRWriter()
    x = w.parameter([3, 4], "f32", "x")
    ins = [x, w.const(np.array(begins)), w.const(np.array(ends))]
    w.result(w.layer("Pad", version, ins, {"pad_mode": mode}, [("f32", [None, None])], name="pd")[0])
    with pytest.raises(InvalidLayer, match=f"pd.*{match}"):
        convert(w.save(tmp_path / "bad.xml"))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@pytest.mark.parametrize("dtype", [np.int16, np.uint16])
def test_pad_16_bit_integers(tmp_path, dtype, mode):
    """onnxruntime's CPU Pad has no 16-bit kernels: Pad runs in i32/u32 (a run-time pad value too).
    OpenVINO 2026.4's CPU plugin pads integers with 0 instead of a run-time pad_value (measured on
    i16 and i32; f32 is right), so the constant mode is compared with it on the data only."""
    x, v = ov_parameter([2, None], dtype, "x"), ov_parameter([], dtype, "v")
    extra = (v,) if mode == "constant" else ()
    node = ops.pad(x, ops.constant(np.array([1, 0])), ops.constant(np.array([1, 0])), mode, *extra)
    xml = ov_save(tmp_path / "p.xml", node, [x, *extra])
    info = np.iinfo(dtype)
    data = np.array([[info.min, 1, 2, info.max], [7, 8, 9, 10]], dtype)
    feeds = {"x": data, **({"v": np.array(info.max - 1, dtype)} if extra else {})}
    got = run_onnx(xml, feeds)[0]
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), "oracle")
    ov_out = run_openvino(xml, feeds)[0]
    assert_bitexact(got[1:3] if extra else got, ov_out[1:3] if extra else ov_out, "openvino")
    np_mode = {"constant": "constant", "edge": "edge", "reflect": "reflect"}[mode]
    kw = {"constant_values": info.max - 1} if extra else {}
    assert_bitexact(got, np.pad(data, ((1, 1), (0, 0)), np_mode, **kw))
