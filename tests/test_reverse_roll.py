"""Reverse-1 and Roll-7 on OpenVINO-written IR against the oracle, numpy and the OpenVINO runtime,
bit for bit (data movement)."""
from __future__ import annotations

import numpy as np
import openvino.opset7 as o7
import openvino.opset15 as ops
import pytest
from openvino.utils.node_factory import NodeFactory

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, ov_parameter, ov_save

from util import bitexact_everywhere

RNG = np.random.default_rng(11)
DTYPES = [np.int8, np.uint8, np.float16, np.float32, np.int64]


def _data(shape, dtype, snan=False):
    """f16: every bit pattern; signalling NaNs only when ``snan`` (OpenVINO's CPU Reverse and Roll
    quiet them, measured: 0x7D01 -> 0x7F01; ours keep them, as a data-movement op must)."""
    if np.dtype(dtype) == np.float16:
        bits = RNG.integers(0, 2**16, shape).astype(np.uint16)
        if not snan:
            bits = np.where((bits & 0x7C00) == 0x7C00, bits | 0x0200, bits).astype(np.uint16)
        return bits.view(np.float16)
    return RNG.integers(0, 100, shape).astype(dtype)


def _reverse(x, axes, mode):
    """Reverse-1 is not in OpenVINO's Python opsets; the node factory builds it."""
    dtype = np.bool_ if mode == "mask" else np.int64
    return NodeFactory("opset1").create("Reverse", [x.output(0), ops.constant(np.array(axes, dtype)).output(0)], {"mode": mode})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode,axes,flip", [("index", [0, -1], (0, 2)), ("index", [2, 2], (2,)),
                                            ("mask", [False, True, True], (1, 2)), ("index", [], ())])
def test_reverse(tmp_path, dtype, mode, axes, flip):
    x = ov_parameter([None, 3, 4], dtype, "x")
    xml = ov_save(tmp_path / "m.xml", _reverse(x, axes, mode), [x])
    for n in (1, 2):
        data = _data((n, 3, 4), dtype)
        bitexact_everywhere(xml, {"x": data}, np.flip(data, flip) if flip else data)


def test_reverse_f16_keeps_signalling_nans(tmp_path):
    x = ov_parameter([3, 4], np.float16, "x")
    xml = ov_save(tmp_path / "m.xml", _reverse(x, [1], "index"), [x])
    data = _data((3, 4), np.float16, snan=True)
    data.view(np.uint16)[0] = [0x7D01, 0xFD00, 0x7E00, 0x3C00]
    bitexact_everywhere(xml, {"x": data}, np.flip(data, 1), openvino=False)


def test_reverse_invalid(tmp_path):
    w = IRWriter()
    x = w.parameter([2, 3], "f32", "x")
    out = w.layer("Reverse", "opset1", [x, w.const(np.array([True, False, True]))], {"mode": "mask"},
                  outputs=[("f32", (2, 3))])[0]
    w.result(out)
    xml = w.save(tmp_path / "bad.xml")
    with pytest.raises(InvalidLayer, match="mask"):
        convert(xml)
    with pytest.raises(InvalidLayer):
        evaluate(ir2onnx.load_ir(xml), {"x": np.zeros((2, 3), np.float32)})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shift,axes", [(1, 0), ([-1, 2], [0, 1]), ([1, 2, 1], [0, 1, 0]), ([7, -9], [-1, 1]),
                                        (3, [0, 1])])
def test_roll_constant(tmp_path, dtype, shift, axes):
    x = ov_parameter([4, 3], dtype, "x")
    node = o7.roll(x, ops.constant(np.array(shift, np.int64)), ops.constant(np.array(axes, np.int32)))
    xml = ov_save(tmp_path / "m.xml", node, [x])
    data = _data((4, 3), dtype)
    sh = np.broadcast_to(np.array(shift), np.shape(axes))
    # OpenVINO's CPU plugin refuses a scalar shift with several axes (valid per spec):
    # "'shift' and 'axes' dimensions mismatch"; that case is checked against oracle and numpy
    bitexact_everywhere(xml, {"x": data}, np.roll(data, tuple(np.ravel(sh)), tuple(np.ravel(axes))),
           openvino=np.ndim(shift) == np.ndim(axes))


def test_roll_f16_keeps_signalling_nans(tmp_path):
    x = ov_parameter([4, 3], np.float16, "x")
    xml = ov_save(tmp_path / "m.xml", o7.roll(x, ops.constant(np.array([1, -1])), ops.constant(np.array([0, 1]))), [x])
    data = _data((4, 3), np.float16, snan=True)
    data.view(np.uint16)[0] = [0x7D01, 0xFD00, 0x7C01]
    bitexact_everywhere(xml, {"x": data}, np.roll(data, (1, -1), (0, 1)), openvino=False)


def test_roll_spec_example_2(tmp_path):
    x = ov_parameter([4, 3], np.int32, "x")
    xml = ov_save(tmp_path / "m.xml", o7.roll(x, ops.constant(np.array([-1, 2])), ops.constant(np.array([0, 1]))), [x])
    want = np.array([[5, 6, 4], [8, 9, 7], [11, 12, 10], [2, 3, 1]], np.int32)
    bitexact_everywhere(xml, {"x": np.arange(1, 13, dtype=np.int32).reshape(4, 3)}, want)


@pytest.mark.parametrize("stype", [np.int32, np.int64])
def test_roll_runtime_shift_dynamic_dims(tmp_path, stype):
    x, s = ov_parameter([None, None, 3], np.float16, "x"), ov_parameter([2], stype, "s")
    xml = ov_save(tmp_path / "m.xml", o7.roll(x, s, ops.constant(np.array([1, 0]))), [x, s])
    for shape, shift in (((2, 5, 3), [7, -3]), ((3, 1, 3), [-4, 2]), ((1, 4, 3), [0, 0])):
        data = _data(shape, np.float16)
        bitexact_everywhere(xml, {"x": data, "s": np.array(shift, stype)}, np.roll(data, tuple(shift), (1, 0)))


def test_roll_scalar_runtime_shift_repeated_axis(tmp_path):
    x, s = ov_parameter([5, 2], np.int8, "x"), ov_parameter([], np.int64, "s")
    xml = ov_save(tmp_path / "m.xml", o7.roll(x, s, ops.constant(np.array([0, 0, 1]))), [x, s])
    data = _data((5, 2), np.int8)
    for shift in (3, -8):
        bitexact_everywhere(xml, {"x": data, "s": np.array(shift, np.int64)}, np.roll(data, (2 * shift, shift), (0, 1)),
               openvino=False)  # OpenVINO's CPU plugin refuses a scalar shift with 1-D axes


@pytest.mark.parametrize("stype", [np.int32, np.int64])
def test_roll_run_time_axes_and_shift(tmp_path, stype):
    """axes and shift fed at run time (negative and repeated axes add up), dynamic dims."""
    x = ov_parameter([None, None, 3], np.float32, "x")
    s, a = ov_parameter([3], stype, "s"), ov_parameter([3], stype, "a")
    xml = ov_save(tmp_path / "m.xml", o7.roll(x, s, a), [x, s, a])
    for shape in ((2, 5, 3), (4, 1, 3)):
        data = _data(shape, np.float32)
        for shift, axes in (([1, -2, 7], [0, 1, 2]), ([2, 3, -1], [-1, 0, 2]), ([0, 0, 0], [1, 1, 1])):
            feeds = {"x": data, "s": np.array(shift, stype), "a": np.array(axes, stype)}
            bitexact_everywhere(xml, feeds, np.roll(data, tuple(shift), tuple(axes)))


@pytest.mark.parametrize("mode,axes", [("index", [0, -1]), ("index", [2, 2]), ("index", [1]),
                                       ("mask", [True, False, True]), ("mask", [False, False, False])])
def test_reverse_run_time_axes(tmp_path, mode, axes):
    """The reversed axes fed at run time (a Parameter), dynamic dims of two sizes."""
    x = ov_parameter([None, None, 4], np.int16, "x")
    a = ov_parameter([len(axes)], np.bool_ if mode == "mask" else np.int32, "a")
    node = NodeFactory("opset1").create("Reverse", [x.output(0), a.output(0)], {"mode": mode})
    xml = ov_save(tmp_path / "m.xml", node, [x, a])
    flip = tuple(i for i, f in enumerate(axes) if f) if mode == "mask" else tuple(sorted({v % 3 for v in axes}))
    for shape in ((2, 3, 4), (1, 5, 4)):
        data = _data(shape, np.int16)
        bitexact_everywhere(xml, {"x": data, "a": np.array(axes, a.get_element_type().to_dtype())},
               np.flip(data, flip) if flip else data)


def test_roll_refusals(tmp_path):
    w = IRWriter()
    x = w.parameter([2, 3], "f32", "x")
    out = w.layer("Roll", "opset7", [x, w.const(np.array([1, 2], np.int64)), w.const(np.array([0, 5], np.int64))],
                  outputs=[("f32", (2, 3))])[0]
    w.result(out)
    xml = w.save(tmp_path / "bad.xml")
    with pytest.raises(InvalidLayer, match="out of range"):
        convert(xml)
    with pytest.raises(InvalidLayer):
        evaluate(ir2onnx.load_ir(xml), {"x": np.zeros((2, 3), np.float32)})
