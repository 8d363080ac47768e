"""RandomUniform-8 and Multinomial-13 on OpenVINO-written IR: ONNX's generators cannot give
OpenVINO's values (README), so these tests check what must agree: shape (run-time shapes
included), element type, range ([min, max); class indices of non-zero probability), a seeded
model repeating itself, and the degenerate distributions where every generator agrees."""
from __future__ import annotations

import numpy as np
import openvino.opset8 as o8
import openvino.opset13 as o13
import openvino.opset15 as ops
import pytest

from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.testing import assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int32, np.int64],
                         ids=lambda t: np.dtype(t).name)
def test_random_uniform_shape_type_range(tmp_path, dtype):
    shape = ov_parameter([3], np.int64, "shape")
    low, high = ov_parameter([], dtype, "low"), ov_parameter([], dtype, "high")
    name = {np.float32: "f32", np.float16: "f16", np.float64: "f64", np.int32: "i32", np.int64: "i64"}[dtype]
    xml = ov_save(tmp_path / "u.xml", o8.random_uniform(shape, low, high, name, 0, 0), [shape, low, high])
    feeds = {"shape": np.array([4, 50, 10], np.int64), "low": np.array(-3, dtype), "high": np.array(5, dtype)}
    got = run_onnx(xml, feeds)[0]
    assert got.shape == (4, 50, 10) and got.dtype == dtype
    assert got.min() >= -3 and got.max() < 5
    center = 0.5 if dtype in (np.int32, np.int64) else 1.0  # integers: -3 .. 4
    assert abs(float(got.astype(np.float64).mean()) - center) < 0.3
    assert len(np.unique(got)) > (7 if dtype in (np.int32, np.int64) else 500)
    ov_out = run_openvino(xml, feeds)[0]
    assert ov_out.shape == got.shape and ov_out.dtype == got.dtype
    feeds["shape"] = np.array([2, 1, 3], np.int64)  # the shape is a run-time input
    assert run_onnx(xml, feeds)[0].shape == (2, 1, 3)


def test_random_uniform_seeded_repeats_and_constant_inputs(tmp_path):
    y = o8.random_uniform(ops.constant(np.array([2, 3], np.int64)), ops.constant(np.float32(0)),
                          ops.constant(np.float32(1)), "f32", 5, 9)
    x = ov_parameter([2, 3])
    xml = ov_save(tmp_path / "s.xml", ops.add(y, x), [x], compress_to_fp16=True)
    model = convert(xml)
    nodes = [n for n in model.graph.node if n.op_type == "RandomUniformLike"]
    assert len(nodes) == 1 and any(a.name == "seed" for a in nodes[0].attribute)
    zeros = {"x": np.zeros((2, 3), np.float32)}
    first, second = run_onnx(xml, zeros)[0], run_onnx(xml, zeros)[0]
    assert_bitexact(first, second)
    assert ((first >= 0) & (first < 1)).all()


@pytest.mark.parametrize("log_probs", [False, True])
@pytest.mark.parametrize("etype", ["i32", "i64"])
def test_multinomial_shape_type_range(tmp_path, log_probs, etype):
    probs = ov_parameter([None, 5], np.float32, "probs")
    xml = ov_save(tmp_path / "m.xml", o13.multinomial(probs, ops.constant(np.array([200], np.int64)), etype, True,
                                                     log_probs, 0, 0), [probs])
    p = np.array([[0.1, 0, 0.4, 0.5, 0], [1, 1, 1, 1, 0]], np.float32)
    feeds = {"probs": np.log(np.where(p > 0, p, 1e-30)).astype(np.float32) if log_probs else p}
    got = run_onnx(xml, feeds)[0]
    assert got.shape == (2, 200) and got.dtype == (np.int32 if etype == "i32" else np.int64)
    assert set(np.unique(got[0])) <= {0, 2, 3} and set(np.unique(got[1])) <= {0, 1, 2, 3}
    assert len(np.unique(got[1])) == 4  # 200 draws of 4 equal classes
    ov_out = run_openvino(xml, feeds)[0]
    assert ov_out.shape == got.shape and ov_out.dtype == got.dtype


def test_multinomial_degenerate(tmp_path):
    probs = ov_parameter([1, 4], np.float32, "probs")
    xml = ov_save(tmp_path / "d.xml", o13.multinomial(probs, ops.constant(np.int64(6)), "i64", True, False, 1, 2),
                  [probs])
    feeds = {"probs": np.array([[0, 0, 0, 3]], np.float32)}
    assert_bitexact(run_onnx(xml, feeds)[0], np.full((1, 6), 3, np.int64))
    assert_bitexact(run_openvino(xml, feeds)[0], np.full((1, 6), 3, np.int64))


def test_multinomial_refusals(tmp_path):
    probs = ov_parameter([2, 4], np.float32, "probs")
    xml = ov_save(tmp_path / "r.xml", o13.multinomial(probs, ops.constant(np.int64(2)), "i64", False, False), [probs])
    with pytest.raises(UnsupportedLayer, match="with replacement only"):
        convert(xml)
    count = ov_parameter([], np.int64, "count")
    xml = ov_save(tmp_path / "c.xml", o13.multinomial(probs, count, "i64", True, False), [probs, count])
    with pytest.raises(UnsupportedLayer, match="num_samples known only at run time"):
        convert(xml)
