"""MVN-1 (Model Optimizer's form, in Open Model Zoo IRs such as face-detection-0105) on
OpenVINO-written IR against the oracle and the OpenVINO runtime, as its CPU plugin runs it: over
the axes from 1 or 2 to the last, eps inside the sqrt (as the spec says and
ONNX InstanceNormalization, which Model Optimizer wrote as MVN-1, computes)."""
from __future__ import annotations

import numpy as np
import openvino.opset2 as o2
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import ov_parameter, ov_save, run_onnx, run_openvino


@pytest.mark.parametrize("across", [False, True])
@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("shape", [[2, 3, 4, 5], [-1, 3, 6], [1, 2, 2, 3, 4]])
def test_mvn1(tmp_path, across, normalize, shape):
    x = ov_parameter(shape)
    xml = ov_save(tmp_path / "m.xml", [o2.mvn(x, across, normalize, 1e-2)], [x])
    data = (np.random.default_rng(1).standard_normal([2 if d == -1 else d for d in shape]) * 0.1).astype(np.float32)
    want = next(iter(evaluate(ir2onnx.load_ir(xml), {"x": data}).values()))
    got = run_onnx(xml, {"x": data})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, run_openvino(xml, {"x": data})[0], rtol=1e-5, atol=1e-6)
    if normalize:  # eps inside the sqrt: a large eps shows which (outside gives another value)
        c = data.astype(np.float64) - data.mean(axis=tuple(range(1 if across else 2, data.ndim)), keepdims=True)
        sd = np.sqrt((c ** 2).mean(axis=tuple(range(1 if across else 2, data.ndim)), keepdims=True))
        np.testing.assert_allclose(got, c / np.sqrt(sd ** 2 + 1e-2), rtol=1e-5, atol=1e-6)


def test_mvn1_as_model_optimizer_wrote_it(tmp_path):
    """Model Optimizer's IRs say version="opset1" and have no reduction_axes."""
    x = ov_parameter([1, 3, 4, 5])
    xml = ov_save(tmp_path / "m.xml", [o2.mvn(x, False, True, 1e-5)], [x])
    text = xml.read_text().replace('version="opset2"', 'version="opset1"').replace(' reduction_axes="2, 3"', "")
    assert 'type="MVN" version="opset1"' in text and "reduction_axes" not in text
    xml.write_text(text)
    data = np.random.default_rng(2).standard_normal((1, 3, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(run_onnx(xml, {"x": data})[0], run_openvino(xml, {"x": data})[0], rtol=1e-5, atol=1e-6)


def test_mvn1_rank_too_small_is_invalid(tmp_path):
    x = ov_parameter([4, 3])
    xml = ov_save(tmp_path / "m.xml", [o2.mvn(x, False, True, 1e-5)], [x])
    with pytest.raises(InvalidLayer, match="no axes from 2"):
        convert(xml)
