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


# -- ONNX models with run-time inputs, through OpenVINO's ONNX frontend and back ---------------------
def _onnx_roundtrip(tmp_path, nodes, inputs, outputs, feeds, opset=18):
    """An ONNX model (onnx.helper) read by OpenVINO's ONNX frontend, saved as IR (defaults), converted
    back by ir2onnx: onnxruntime on the result matches onnxruntime on the original."""
    import openvino as ov
    import onnxruntime as ort
    from onnx import helper

    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    ov.save_model(ov.Core().read_model(src), tmp_path / "m.xml")
    graph = ir2onnx.load_ir(tmp_path / "m.xml")
    assert len(graph.parameters) == len(feeds)  # every run-time input stays a Parameter
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    got = run_onnx(tmp_path / "m.xml", feeds)
    for g, w_ in zip(got, want):
        assert g.shape == w_.shape
        np.testing.assert_allclose(g, w_, rtol=1e-5, atol=1e-6)
    return got


def test_onnx_roundtrip_run_time_inputs(tmp_path):
    from onnx import TensorProto, helper

    F, I = TensorProto.FLOAT, TensorProto.INT64
    vi = helper.make_tensor_value_info
    nodes = [
        helper.make_node("ReduceMax", ["x", "axes"], ["r"], keepdims=1),
        helper.make_node("Pad", ["x", "pads"], ["p"], mode="reflect"),
        helper.make_node("TopK", ["x", "k"], ["tv", "ti"], axis=-1),
        helper.make_node("CumSum", ["x", "axis"], ["c"]),
        helper.make_node("Slice", ["x", "starts", "ends", "sl_axes"], ["s"]),
        helper.make_node("Tile", ["x", "reps"], ["t"]),
        helper.make_node("Resize", ["x", "", "scales"], ["z"], mode="linear"),
    ]
    inputs = [vi("x", F, [None, None, None, None]), vi("axes", I, [2]), vi("pads", I, [8]), vi("k", I, [1]),
              vi("axis", I, []), vi("starts", I, [1]), vi("ends", I, [1]), vi("sl_axes", I, [1]),
              vi("reps", I, [4]), vi("scales", F, [4])]
    outputs = [vi(n, F if n != "ti" else I, None) for n in ("r", "p", "tv", "ti", "c", "s", "t", "z")]
    for shape in ((1, 2, 5, 6), (2, 3, 4, 4)):
        feeds = {"x": np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32),
                 "axes": np.array([1, -1]), "pads": np.array([0, 0, 1, 2, 0, 0, 2, 1]), "k": np.array([3]),
                 "axis": np.array(-2), "starts": np.array([-3]), "ends": np.array([100]), "sl_axes": np.array([2]),
                 "reps": np.array([1, 2, 1, 2]), "scales": np.array([1, 1, 2, 1.5], np.float32)}
        _onnx_roundtrip(tmp_path, nodes, inputs, outputs, feeds)


def test_onnx_roundtrip_more_run_time_inputs(tmp_path):
    from onnx import TensorProto, helper

    F, I = TensorProto.FLOAT, TensorProto.INT64
    vi = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Split", ["x", "split"], ["a", "b"], axis=1),
        helper.make_node("Unsqueeze", ["x", "uaxes"], ["u"]),
        helper.make_node("ReduceMean", ["x", "axes"], ["m"], keepdims=1),
        helper.make_node("Range", ["start", "limit", "delta"], ["rg"]),
        helper.make_node("Expand", ["v", "eshape"], ["e"]),
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "mob", "iou", "st"], ["sel"]),
    ]
    inputs = [vi("x", F, [None, 6, None]), vi("split", I, [2]), vi("uaxes", I, [1]), vi("axes", I, [1]),
              vi("start", I, []), vi("limit", I, []), vi("delta", I, []), vi("v", F, [None, 1]),
              vi("eshape", I, [2]), vi("boxes", F, [1, None, 4]), vi("scores", F, [1, 2, None]),
              vi("mob", I, [1]), vi("iou", F, [1]), vi("st", F, [1])]
    outputs = [vi(n, F, None) for n in ("a", "b", "u", "m")] + [vi("rg", I, None), vi("e", F, None),
                                                                 vi("sel", I, None)]
    rng = np.random.default_rng(4)
    lo = rng.uniform(0, 8, (1, 7, 2)).astype(np.float32)
    boxes = np.concatenate([lo, lo + rng.uniform(1, 4, (1, 7, 2)).astype(np.float32)], axis=2)
    for n in (3, 5):
        feeds = {"x": rng.standard_normal((2, 6, n)).astype(np.float32), "split": np.array([2, 4]),
                 "uaxes": np.array([-1]), "axes": np.array([-1]), "start": np.array(n), "limit": np.array(-4),
                 "delta": np.array(-2), "v": rng.standard_normal((n, 1)).astype(np.float32),
                 "eshape": np.array([1, 4]), "boxes": boxes, "scores": rng.uniform(0, 1, (1, 2, 7)).astype(np.float32),
                 "mob": np.array([n]), "iou": np.array([0.3], np.float32), "st": np.array([0.2], np.float32)}
        _onnx_roundtrip(tmp_path, nodes, inputs, outputs, feeds)
