"""GridSample-9 on OpenVINO-written IR (dynamic dims, the grid a run-time input) in all 18
combinations of mode, padding_mode and align_corners, at ONNX opset 16 (GridSample-16) and 20
(GridSample-20): onnxruntime against the oracle and OpenVINO (f32: rtol/atol 1e-5; f16: 2e-3),
against torch.nn.functional.grid_sample (samples/grid_sample/, converted by OpenVINO's PyTorch
frontend) and against onnxruntime on ONNX GridSample models read by OpenVINO.

On nearest's rounding ties (a source coordinate k + 0.5 up to float rounding) OpenVINO 2026.4's CPU
plugin picks other pixels than torch and onnxruntime (it computes the coordinate in another
order); we follow torch. Elsewhere nearest agrees bit for bit."""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import onnxruntime as ort
import openvino as ov
import openvino.opset9 as o9
import pytest
from onnx import TensorProto, helper

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "grid_sample"
COMBOS = list(itertools.product(["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"], [False, True]))
TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float16: dict(rtol=2e-3, atol=2e-3)}


def _ir(tmp_path, mode, pad, align, dtype=np.float32):
    x = ov_parameter([None, 3, None, None], dtype, "x")
    grid = ov_parameter([None, None, None, 2], dtype, "grid")
    y = o9.grid_sample(x, grid, {"align_corners": align, "mode": mode, "padding_mode": pad})
    return ov_save(tmp_path / "gs.xml", y, [x, grid])


def _feeds(dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((2, 3, 5, 6)).astype(dtype),
            "grid": rng.uniform(-1.6, 1.6, (2, 4, 7, 2)).astype(dtype)}


@pytest.mark.parametrize("opset", [16, 20])
@pytest.mark.parametrize("mode, pad, align", COMBOS)
def test_modes(tmp_path, mode, pad, align, opset):
    xml = _ir(tmp_path, mode, pad, align)
    feeds = _feeds()
    got = run_onnx(xml, feeds, opset=opset)[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    ov_out = run_openvino(xml, feeds)[0]
    assert got.shape == (2, 3, 4, 7) and got.dtype == np.float32
    if mode == "nearest":  # data movement, no ties in this grid
        assert_bitexact(got, want, "oracle")
        assert_bitexact(got, ov_out, "openvino")
    else:
        np.testing.assert_allclose(got, want, **TOL[np.float32])
        np.testing.assert_allclose(got, ov_out, **TOL[np.float32])
    assert np.count_nonzero(got) > got.size // 4  # many points sample the image


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_f16(tmp_path, mode):
    xml = _ir(tmp_path, mode, "border", False, np.float16)
    feeds = _feeds(np.float16)
    got = run_onnx(xml, feeds)[0]
    assert got.dtype == np.float16
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), **TOL[np.float16])
    ov_out = run_openvino(xml, feeds)[0].astype(np.float32)
    np.testing.assert_allclose(got.astype(np.float32), ov_out, **TOL[np.float16])


def test_padding_modes_differ_outside(tmp_path):
    """One point left of the image, align_corners=True: zeros 0, border the first column,
    reflection the column mirrored about it."""
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 1, 4) * 10
    grid = np.array([[[[-1 - 2 / 3, 0.0]]]], np.float32)  # x = -1 pixel
    got = {}
    for pad in ("zeros", "border", "reflection"):
        got[pad] = run_onnx(_ir(tmp_path, "bilinear", pad, True), {"x": np.repeat(x, 3, 1), "grid": grid})[0]
    np.testing.assert_allclose([got[p][0, 0, 0, 0] for p in ("zeros", "border", "reflection")], [0, 0, 10], atol=1e-5)


def _torch_sample(name):
    stem = str(SAMPLES / name)
    feeds = {"in0": np.load(stem + "_in0.npy"), "in1": np.load(stem + "_in1.npy")}
    return Path(stem + ".xml"), feeds, [np.load(stem + f"_out{k}.npy") for k in range(len(COMBOS))]


@pytest.mark.parametrize("name", ["random", "framework/ties"])
@pytest.mark.parametrize("opset", [16, 20])
def test_torch_round_trip(opset, name):
    """All 18 combinations from torch, converted by OpenVINO: onnxruntime on ours equals torch
    (nearest bit for bit, rounding ties included), the others within 1e-5."""
    xml, feeds, want = _torch_sample(name)
    assert xml.read_text().count('type="GridSample"') == 18
    got = run_onnx(xml, feeds, opset=opset)
    for (mode, pad, align), g, w in zip(COMBOS, got, want):
        if mode == "nearest":
            assert_bitexact(g, w, f"{mode} {pad} {align}")
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"{mode} {pad} {align}")


def test_openvino_deviates_on_nearest_ties():
    """The tie rows of the torch sample: OpenVINO's CPU plugin differs from torch, we do not."""
    xml, feeds, want = _torch_sample("framework/ties")
    ov_out = run_openvino(xml, feeds)
    k = COMBOS.index(("nearest", "border", False))
    assert not np.array_equal(ov_out[k], want[k])
    assert_bitexact(run_onnx(xml, feeds)[k], want[k])


@pytest.mark.parametrize("mode, pad, align", [("bilinear", "reflection", False), ("nearest", "zeros", True),
                                              ("bicubic", "border", False)])
def test_onnx_grid_sample_read_by_openvino(tmp_path, mode, pad, align):
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=pad, align_corners=int(align))
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 5, 6]),
                                            helper.make_tensor_value_info("grid", TensorProto.FLOAT, [2, 4, 7, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    model.ir_version = 8
    feeds = _feeds(seed=4)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    (tmp_path / "gs.onnx").write_bytes(model.SerializeToString())
    xml = tmp_path / "gs.xml"
    ov.save_model(ov.Core().read_model(str(tmp_path / "gs.onnx")), str(xml))
    assert 'type="GridSample"' in xml.read_text()
    np.testing.assert_allclose(run_onnx(xml, feeds)[0], want, rtol=1e-6, atol=1e-6)


def test_opset_15_refused(tmp_path):
    with pytest.raises(UnsupportedLayer, match="opset >= 16"):
        convert(_ir(tmp_path, "bilinear", "zeros", False), opset=15)


def _writer_model(tmp_path, dtype, grid_shape=(1, 2, 2, 2)):
    w = IRWriter()
    x = w.parameter([1, 1, 3, 3], dtype, "x")
    grid = w.parameter(list(grid_shape), "f32" if dtype != "f64" else "f64", "grid")
    y = w.layer("GridSample", "opset9", [x, grid], {"mode": "bilinear", "padding_mode": "zeros",
                                                    "align_corners": "false"}, [(dtype, [1, 1, 2, 2])], name="gs")[0]
    w.result(y)
    return w.save(tmp_path / "w.xml")


def test_integer_data_refused(tmp_path):
    with pytest.raises(UnsupportedLayer, match="gs.*data of type i32"):
        convert(_writer_model(tmp_path, "i32"))


def test_f64_needs_opset_20(tmp_path):
    xml = _writer_model(tmp_path, "f64")
    with pytest.raises(UnsupportedLayer, match="opset >= 20"):
        convert(xml, opset=17)
    assert next(o.version for o in convert(xml).opset_import if o.domain in ("", "ai.onnx")) == 20  # chosen
    feeds = {"x": np.arange(9, dtype=np.float64).reshape(1, 1, 3, 3),
             "grid": np.array([[[[0, 0], [0.5, -0.25]], [[-1, 1], [0.3, 0.7]]]], np.float64)}
    got = run_onnx(xml, feeds, opset=20)[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_grid_last_dim_invalid(tmp_path):
    with pytest.raises(InvalidLayer, match="gs.*last dim of grid"):
        convert(_writer_model(tmp_path, "f32", (1, 2, 2, 3)))
