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


# -- samples/dynamic (samples/make_dynamic.py): the run-time patterns of torchvision's squeezenet,
# googlenet, shufflenet_v2 and swin_t in small modules, every dim dynamic, f16 weights. Several
# spatial sizes each: pads, split lengths, window counts and k are computed at run time.
DYNAMIC = Path(__file__).resolve().parents[1] / "samples" / "dynamic"
DYNAMIC_MODELS = {
    "squeezenet": ({"MaxPool"}, [(1, 3, 33, 35), (2, 3, 30, 24), (1, 3, 40, 41)]),
    "googlenet": ({"MaxPool", "AvgPool"}, [(1, 3, 35, 37), (1, 3, 32, 32), (2, 3, 29, 44)]),
    "shufflenet": ({"VariadicSplit"}, [(1, 3, 33, 31), (2, 3, 16, 20), (1, 3, 41, 27)]),
    "swin": ({"Pad", "Roll"}, [(1, 3, 14, 18), (2, 3, 16, 16), (1, 3, 10, 22)]),
    "topk": ({"TopK"}, [(2, 3, 9), (1, 4, 12), (3, 1, 2)]),
}


@pytest.mark.parametrize("name", list(DYNAMIC_MODELS))
def test_dynamic_models_at_several_sizes(name):
    xml = DYNAMIC / name / "model.xml"
    types, shapes = DYNAMIC_MODELS[name]
    graph = ir2onnx.load_ir(xml)
    assert types <= {layer.type for layer in graph.order}
    dims = graph.parameters[0].outputs[0].shape  # convert_model's defaults: dynamic but for channels
    assert dims[0] is None and dims[-2:] == (None, None)
    for shape in shapes:
        x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
        got = run_onnx(xml, [x])
        want = list(evaluate(graph, {"x": x}).values())
        ov_out = run_openvino(xml, [x])
        for g, w_, o in zip(got, want, ov_out):
            assert g.shape == o.shape == w_.shape, shape
            np.testing.assert_allclose(g, o, rtol=1e-3, atol=1e-5)
            np.testing.assert_allclose(g, w_, rtol=1e-3, atol=1e-5)
        assert np.abs(got[0]).max() > 1e-3
