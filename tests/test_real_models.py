"""The committed "real model" samples (samples/real/, written by samples/make_real.py and
samples/make_real_transformer.py from tiny PyTorch models through OpenVINO's PyTorch frontend):
onnxruntime, the oracle interpreter and the OpenVINO runtime agree on them (f32: rtol 1e-4,
atol 1e-5, the harness's defaults are looser).

CI has no torch: these tests read only the committed IR files and inputs.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_check, run_onnx, run_openvino

REAL = Path(__file__).resolve().parents[1] / "samples" / "real"
MODELS = {
    "cnn": ({"Convolution", "GroupConvolution", "MaxPool", "AvgPool", "ReLU", "Clamp", "MatMul"}, (1, 5)),
    "attention": ({"MatMul", "SoftMax", "Transpose", "Gelu", "Tanh", "Reshape"}, (1, 6, 16)),
    "transformer": ({"Gather", "MVN", "ScaledDotProductAttention", "Split", "Gelu", "ReduceMean", "MatMul"}, (1, 4)),
    "detector": ({"Convolution", "PReLU", "Swish", "Interpolate", "Concat", "Sigmoid"}, (1, 16, 8, 8)),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_three_backends_agree(name):
    xml = REAL / name / "model.xml"
    types, out_shape = MODELS[name]
    assert types <= {layer.type for layer in ir2onnx.load_ir(xml).order}
    assert xml.stat().st_size + xml.with_suffix(".bin").stat().st_size < 200_000
    x = np.load(REAL / name / "input.npy")
    model = convert(xml)
    onnx.checker.check_model(model, full_check=True)
    got = run_onnx(xml, [x])[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values()))
    ov_out = run_openvino(xml, [x])[0]
    assert got.shape == out_shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got, ov_out, rtol=1e-4, atol=1e-5)
    assert np.abs(got).max() > 1e-2  # not a degenerate all-zero output


@pytest.mark.parametrize("name", list(MODELS))
def test_harness_check(name):
    assert_check(REAL / name / "model.xml", inputs={"x": np.load(REAL / name / "input.npy")})
