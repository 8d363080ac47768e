"""SoftMax-1/-8 and LogSoftmax-5 on OpenVINO-written IR against the float64 oracle and the OpenVINO
runtime: f32 rtol 1e-5, atol 1e-6 (SoftMax-1/-8 also run in test_activations.py's float sweep)."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, ov_parameter, ov_save, run_onnx

from util import FLOAT_TOLS, close_everywhere, save_one_input


@pytest.mark.parametrize("make", [lambda x: ops.softmax(x, -1), lambda x: ops.log_softmax(x, 2)])
def test_softmax_over_an_empty_axis(tmp_path, make):
    """Regression (fuzzing): SoftMax/LogSoftmax over a size-0 axis (a dynamic dim run at 0) made the
    oracle fail (max of nothing); the same converted model runs at sizes 4 and 0."""
    xml = save_one_input(tmp_path, make, shape=[2, 3, -1])
    for n in (4, 0):
        x = np.random.default_rng(n).standard_normal((2, 3, n)).astype(np.float32)
        got = run_onnx(xml, {"x": x})[0]
        want = next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values()))
        assert got.shape == want.shape == (2, 3, n)
        np.testing.assert_allclose(got, want, **FLOAT_TOLS[np.float32])


# -- PReLU-1, Elu-1, SoftPlus-4, Mish-4 --------------------------------------------------------
# On OpenVINO-written IR against the float64 oracle and the OpenVINO runtime: f32 rtol 1e-5,
# atol 1e-6; f16 rtol 2e-3, atol 2e-3 (as above).
def _normal_data(shape, dtype=np.float32, scale=4.0):
    return (np.random.default_rng(5).standard_normal(shape) * scale).astype(dtype)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_log_softmax(tmp_path, axis):
    x = ov_parameter([2, 3, 4], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", ops.log_softmax(x, axis), [x])
    data = _normal_data((2, 3, 4))
    got = close_everywhere(xml, {"x": data})
    d = data.astype(np.float64)
    ref = d - d.max(axis, keepdims=True) - np.log(np.exp(d - d.max(axis, keepdims=True)).sum(axis, keepdims=True))
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_log_softmax_bad_axis(tmp_path):
    w = IRWriter()
    x = w.parameter([2, 3], "f32", "x")
    w.result(w.layer("LogSoftmax", "opset5", [x], {"axis": 2}, [("f32", [2, 3])], name="lsm")[0])
    with pytest.raises(InvalidLayer, match="lsm.*out of range"):
        convert(w.save(tmp_path / "bad.xml"))
