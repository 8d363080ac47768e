"""Broadcast-1/-3 (numpy, bidirectional, explicit; constant and run-time target shapes) and
Tile-1 on OpenVINO-written IR: bit for bit against the oracle and the OpenVINO runtime."""
from __future__ import annotations

import numpy as np
import openvino.opset1 as ops1
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx

from util import bitexact_everywhere


def _data(shape, dtype=np.float32):
    return (np.arange(int(np.prod(shape))) + 1).astype(dtype).reshape(shape)


C = lambda v: ops.constant(np.array(v, np.int64))  # noqa: E731


def test_bidirectional_keeps_an_empty_dim(tmp_path):
    """A 1 in the target takes data's 0 (numpy's rule): a Mixtral-style MoE routes no token to an
    expert (samples/llm/mixtral_int8). OpenVINO's CPU plugin dies of SIGFPE on a [0,1] input, so
    the oracle is compared with onnxruntime and numpy only."""
    x = ov_parameter((None, 1), np.int32, "x")
    xml = ov_save(tmp_path / "b.xml", ops.broadcast(x, C([2]), broadcast_spec="bidirectional"), [x])
    data = np.zeros((0, 1), np.int32)
    got = run_onnx(xml, {"x": data})[0]
    assert got.shape == (0, 2)
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), {"x": data}).values())), "onnxruntime vs oracle")


@pytest.mark.parametrize("opset_ops", [ops1, ops])
@pytest.mark.parametrize("shape,target", [((3, 1), [2, 3, 4]), ((1,), [5]), ((2, 3), [2, 3]), ((), [2, 2])])
def test_numpy(tmp_path, opset_ops, shape, target):
    x = ov_parameter(shape, np.float32, "x")
    xml = ov_save(tmp_path / "b.xml", opset_ops.broadcast(x, C(target)), [x])
    data = _data(shape)
    bitexact_everywhere(xml, {"x": data}, np.broadcast_to(data, target))


@pytest.mark.parametrize("shape,target", [((3, 1), [2, 1, 4]), ((4, 1, 2), [3, 1]), ((2,), [1])])
def test_bidirectional(tmp_path, shape, target):
    x = ov_parameter(shape, np.int32, "x")
    xml = ov_save(tmp_path / "b.xml", ops.broadcast(x, C(target), broadcast_spec="bidirectional"), [x])
    data = _data(shape, np.int32)
    bitexact_everywhere(xml, {"x": data}, data * np.ones(target, np.int32))


@pytest.mark.parametrize("opset_ops", [ops1, ops])
@pytest.mark.parametrize("shape,target,axes", [((3,), [2, 3, 4], [1]), ((2, 1), [5, 2, 3, 1], [1, 2]),
                                               ((4,), [4], [0])])
def test_explicit(tmp_path, opset_ops, shape, target, axes):
    x = ov_parameter(shape, np.float32, "x")
    xml = ov_save(tmp_path / "b.xml", opset_ops.broadcast(x, C(target), C(axes), "explicit"), [x])
    data = _data(shape)
    placed = [shape[axes.index(i)] if i in axes else 1 for i in range(len(target))]
    bitexact_everywhere(xml, {"x": data}, np.broadcast_to(data.reshape(placed), target))


@pytest.mark.parametrize("mode", ["numpy", "bidirectional"])
def test_run_time_target(tmp_path, mode):
    """The target shape of another tensor (ShapeOf of a dynamic input) -> Expand at run time."""
    x, like = ov_parameter([3, 1], np.float32, "x"), ov_parameter([None, 3, None], np.float32, "like")
    xml = ov_save(tmp_path / "b.xml", ops.broadcast(x, ops.shape_of(like), broadcast_spec=mode), [x, like])
    feeds = {"x": _data((3, 1)), "like": np.zeros((2, 3, 5), np.float32)}
    bitexact_everywhere(xml, feeds, np.broadcast_to(feeds["x"], (2, 3, 5)))


def test_constant_folds(tmp_path):
    x = ov_parameter([2, 3], np.float32, "x")
    k = ops.broadcast(ops.constant(np.array([1, 2, 3], np.float32)), C([2, 3]))
    xml = ov_save(tmp_path / "f.xml", ops.add(x, k), [x])
    assert [n.op_type for n in convert(xml).graph.node] == ["Add", "Identity"]
    bitexact_everywhere(xml, {"x": _data((2, 3))})


@pytest.mark.parametrize("shape,repeats", [((2, 3), [2, 1]), ((2, 3), [3]), ((3,), [2, 2]), ((2, 1, 2), [1, 3, 2]),
                                           ((2, 3), [1, 1])])
def test_tile(tmp_path, shape, repeats):
    x = ov_parameter(shape, np.int64, "x")
    xml = ov_save(tmp_path / "t.xml", ops.tile(x, C(repeats)), [x])
    data = _data(shape, np.int64)
    bitexact_everywhere(xml, {"x": data}, np.tile(data, repeats))


def test_tile_run_time_repeats(tmp_path):
    x, r = ov_parameter([2, 3], np.float32, "x"), ov_parameter([1], np.int32, "r")
    xml = ov_save(tmp_path / "t.xml", ops.tile(x, r), [x, r])
    feeds = {"x": _data((2, 3)), "r": np.array([3], np.int32)}
    bitexact_everywhere(xml, feeds, np.tile(feeds["x"], [1, 3]))


@pytest.mark.parametrize("version,mode,target,extra,match", [
    ("opset3", "numpy", [2, 2], [], "does not broadcast"),
    ("opset1", "numpy", [3], [], "cannot broadcast to rank"),
    ("opset3", "explicit", [3, 2], [[1, 0]], "must be increasing"),
    ("opset3", "explicit", [3, 4], [], "needs the axes_mapping"),
    ("opset1", "bidirectional", [2, 3], [], "not one of"),
])
def test_invalid(tmp_path, version, mode, target, extra, match):
    w = IRWriter()
    x = w.parameter([2, 3], "f32", "x")
    ins = [x, w.const(np.array(target))] + [w.const(np.array(e)) for e in extra]
    w.result(w.layer("Broadcast", version, ins, {"mode": mode}, [("f32", target)], name="bc")[0])
    with pytest.raises(InvalidLayer, match=f"bc.*{match}"):
        convert(w.save(tmp_path / "bad.xml"))


SIGNALLING_F16 = np.array([0x7C01, 0x7D00, 0xFC05, 0x7C10, 0xFD55, 0x7E01], np.uint16).view(np.float16)


@pytest.mark.parametrize("dynamic", [False, True])
def test_tile_f16_keeps_signalling_nans(tmp_path, dynamic):
    """onnxruntime's f16 Tile quiets signalling NaNs: the f16 lowering is Reshape, Expand, Reshape."""
    x = SIGNALLING_F16.reshape(2, 3)
    p = ov_parameter([None, 3] if dynamic else [2, 3], np.float16, "x")
    xml = ov_save(tmp_path / "t.xml", ops.tile(p, ops.constant(np.array([2, 1, 3], np.int64))), [p])
    (y,) = run_onnx(xml, [x])
    assert_bitexact(y, np.tile(x, (2, 1, 3)))
    assert "Tile" not in [n.op_type for n in convert(xml).graph.node]


def test_tile_f16_with_a_zero_sized_dynamic_dim(tmp_path):
    """The f16 Reshapes keep a 0-sized dim as a literal 0 (allowzero=1), not a copy."""
    p = ov_parameter([None, 0], np.float16, "x")
    xml = ov_save(tmp_path / "t0.xml", ops.tile(p, ops.constant(np.array([1, 3], np.int64))), [p])
    (y,) = run_onnx(xml, [np.zeros((2, 0), np.float16)])
    assert y.shape == (2, 0) and y.dtype == np.float16


@pytest.mark.parametrize("opset_ops", [ops1, ops])
@pytest.mark.parametrize("which", ["target", "axes", "both"])
def test_explicit_run_time_target_and_axes(tmp_path, opset_ops, which):
    """Explicit mode with the target shape and/or axes_mapping fed at run time (i32), data with two
    dynamic dims resolved to several sizes."""
    x = ov_parameter([None, None], np.float32, "x")
    t = ov_parameter([3], np.int32, "t") if which != "axes" else None
    a = ov_parameter([2], np.int32, "a") if which != "target" else None
    cases = [((3, 1), [2, 3, 4], [1, 2]), ((2, 5), [2, 3, 5], [0, 2]), ((1, 4), [2, 4, 3], [0, 1])]
    if which == "target":
        cases = [c for c in cases if c[2] == [0, 2]] + [((2, 1), [2, 7, 3], [0, 2])]
    if which == "axes":
        cases = [((2, 4), [2, 4, 4], [0, 1]), ((4, 1), [2, 4, 4], [1, 2]), ((2, 1), [2, 4, 4], [0, 2])]
    target = t if t is not None else ops.constant(np.array(cases[0][1], np.int64))
    axes = a if a is not None else ops.constant(np.array(cases[0][2], np.int64))
    params = [p for p in (x, t, a) if p is not None]
    xml = ov_save(tmp_path / "b.xml", opset_ops.broadcast(x, target, axes, "explicit"), params)
    for shape, tgt, ax in cases:
        data = _data(shape)
        feeds = {"x": data, **({"t": np.array(tgt, np.int32)} if t is not None else {}),
                 **({"a": np.array(ax, np.int32)} if a is not None else {})}
        placed = [shape[ax.index(i)] if i in ax else 1 for i in range(len(tgt))]
        bitexact_everywhere(xml, feeds, np.broadcast_to(data.reshape(placed), tgt))
