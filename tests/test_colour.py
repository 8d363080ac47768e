"""NV12toRGB/BGR-8 and I420toRGB/BGR-8 on OpenVINO-written IR: single- and multi-plane inputs, u8
and f32 (f16), dynamic batch, compared with the oracle and OpenVINO's CPU plugin. u8 results must
match bit for bit (OpenVINO's f32 formula in its order, clamped, rounded half to even as its CPU
plugin does: the 16x64 images hold exact ties);
float results within 1e-4 (OpenVINO's CPU plugin may fuse multiply-adds)."""
from __future__ import annotations

import numpy as np
import openvino.opset8 as o8
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

H, W = 16, 64  # 1024 luma values, 256 chroma pairs per image: every rounding case shows up


def _model(tmp_path, fn, planes, dtype):
    names = ("y", "u", "v") if len(planes) == 3 else ("y", "uv")
    params = [ov_parameter(s, dtype, n) for s, n in zip(planes, names)]
    return ov_save(tmp_path / "c.xml", getattr(o8, fn)(*params), params), names


def _feeds(names, planes, dtype, batch=2, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for n, s in zip(names, planes):
        shape = [batch if d is None else d for d in s]
        values = rng.integers(0, 256, shape) if dtype == np.uint8 else rng.uniform(-10, 265, shape)
        out[n] = values.astype(dtype)
    return out


LAYOUTS = {
    "nv12-single": ("nv12", [[None, H * 3 // 2, W, 1]]),
    "nv12-two": ("nv12", [[None, H, W, 1], [None, H // 2, W // 2, 2]]),
    "i420-single": ("i420", [[None, H * 3 // 2, W, 1]]),
    "i420-three": ("i420", [[None, H, W, 1], [None, H // 2, W // 2, 1], [None, H // 2, W // 2, 1]]),
}


@pytest.mark.parametrize("order", ["rgb", "bgr"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", [np.uint8, np.float32], ids=["u8", "f32"])
def test_conversion(tmp_path, layout, order, dtype):
    kind, planes = LAYOUTS[layout]
    xml, names = _model(tmp_path, f"{kind}_to_{order}", planes, dtype)
    feeds = _feeds(names, planes, dtype)
    got = run_onnx(xml, feeds)[0]
    assert got.shape == (2, H, W, 3) and got.dtype == dtype
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0]
    ov_out = run_openvino(xml, feeds)[0]
    if dtype == np.uint8:
        assert_bitexact(got, want, "oracle")
        assert_bitexact(got, ov_out, "OpenVINO")
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(got, ov_out, rtol=1e-5, atol=1e-4)


def test_rgb_and_bgr_and_known_pixels(tmp_path):
    """Y=16, U=V=128 is black; Y=235 white; BGR reverses RGB's channels; an exact tie (Y=127,
    U=66, V=204: red 250.5 in f32) rounds to even, as OpenVINO's CPU plugin does."""
    xml, names = _model(tmp_path, "nv12_to_rgb", [[1, 2, 4, 1], [1, 1, 2, 2]], np.uint8)
    feeds = {"y": np.array([16, 235, 127, 127, 16, 235, 127, 127], np.uint8).reshape(1, 2, 4, 1),
             "uv": np.array([128, 128, 66, 204], np.uint8).reshape(1, 1, 2, 2)}
    got = run_onnx(xml, feeds)[0]
    assert got[0, 0, 0].tolist() == [0, 0, 0] and got[0, 0, 1].tolist() == [255, 255, 255]
    assert got[0, 0, 2, 0] == 250
    assert_bitexact(got, run_openvino(xml, feeds)[0], "OpenVINO")
    xml_bgr, _ = _model(tmp_path / "..", "nv12_to_bgr", [[1, 2, 4, 1], [1, 1, 2, 2]], np.uint8)
    assert_bitexact(run_onnx(xml_bgr, feeds)[0], got[..., ::-1].copy())


def test_f16(tmp_path):
    xml, names = _model(tmp_path, "i420_to_rgb", [[1, 6, 4, 1]], np.float16)
    feeds = _feeds(names, [[1, 6, 4, 1]], np.float16)
    got = run_onnx(xml, feeds)[0]
    assert got.dtype == np.float16
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0]
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-3, atol=0.2)


def test_refusals(tmp_path):
    xml, _ = _model(tmp_path, "nv12_to_rgb", [[1, None, None, 1]], np.uint8)
    with pytest.raises(UnsupportedLayer, match="dynamic image height or width"):
        convert(xml)
    from ir2onnx.testing import IRWriter

    w = IRWriter()  # OpenVINO itself refuses to build an odd width
    y = w.parameter([1, 6, 5, 1], "u8", "y")
    w.result(w.layer("I420toRGB", "opset8", [y], {}, [("u8", (1, 4, 5, 3))])[0])
    with pytest.raises(InvalidLayer, match="even sizes"):
        convert(w.save(tmp_path / "odd.xml"))
