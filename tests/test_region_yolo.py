"""RegionYolo-1 and ReorgYolo-2 on YOLO-style heads that OpenVINO writes (f16-compressed
convolution weights, dynamic batch and spatial dims): ReorgYolo bit for bit with OpenVINO, the
oracle and a NumPy formula; RegionYolo within 1e-5 of both (sigmoid and softmax arithmetic)."""
from __future__ import annotations

import numpy as np
import openvino.opset1 as o1
import openvino.opset2 as o2
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

TOL = dict(rtol=1e-5, atol=1e-5)


def _all(xml, feeds):
    return run_onnx(xml, feeds), list(evaluate(ir2onnx.load_ir(xml), feeds).values()), run_openvino(xml, feeds)


def _conv(x, cin, cout, seed, stride=1):
    k = np.random.default_rng(seed).standard_normal((cout, cin, 1, 1)).astype(np.float32) * 0.5
    return ops.convolution(x, ops.constant(k), [stride, stride], [0, 0], [0, 0], [1, 1])


def _numpy_reorg(x, s):
    n, c, h, w = x.shape
    return x.reshape(n, c // (s * s), h, s, w, s).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * s * s, h // s, w // s)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
@pytest.mark.parametrize("shape,stride", [((1, 8, 4, 6), 2), ((2, 18, 6, 3), 3), ((1, 4, 2, 2), 1)])
def test_reorg_yolo_bitexact(tmp_path, shape, stride, dtype):
    x = ov_parameter(list(shape), dtype, "x")
    xml = ov_save(tmp_path / "r.xml", [o2.reorg_yolo(x, [stride])], [x])
    assert 'type="ReorgYolo" version="opset2"' in xml.read_text()
    data = (np.arange(np.prod(shape)) + 1).reshape(shape).astype(dtype)
    got, want, ov_out = _all(xml, {"x": data})
    for other, what in ((want[0], "oracle"), (ov_out[0], "openvino"), (_numpy_reorg(data, stride), "numpy")):
        assert_bitexact(got[0], other, what)


def test_reorg_yolo_dynamic_dims(tmp_path):
    x = ov_parameter([None, 8, None, None], np.float32, "x")
    xml = ov_save(tmp_path / "r.xml", [o2.reorg_yolo(x, [2])], [x])
    for shape in ((1, 8, 4, 6), (3, 8, 2, 8)):
        data = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
        got, want, ov_out = _all(xml, {"x": data})
        assert_bitexact(got[0], want[0], "oracle")
        assert_bitexact(got[0], ov_out[0], "openvino")
        assert_bitexact(got[0], _numpy_reorg(data, 2), "numpy")


def test_reorg_yolo_channels_not_multiple_refused(tmp_path):
    w = IRWriter()
    x = w.parameter([1, 6, 4, 4], "f32", "x")
    y = w.layer("ReorgYolo", "opset2", [x], {"stride": [2]}, [("f32", [1, 24, 2, 2])], name="reorg")[0]
    w.result(y)
    with pytest.raises(UnsupportedLayer, match="reorg.*not a multiple of stride"):
        convert(w.save(tmp_path / "bad.xml"))


def _yolo2(tmp_path, dynamic=False, axis=1, end_axis=3, classes=3, coords=4, num=2):
    """YOLO v2: a passthrough branch reorganised by ReorgYolo, concatenated with the strided
    branch, a 1x1 conv to num * (coords + classes + 1) channels, RegionYolo with softmax."""
    img = ov_parameter([None, 3, None, None] if dynamic else [1, 3, 8, 12], np.float32, "img")
    fine = _conv(img, 3, 4, 0)
    coarse = _conv(img, 3, 6, 1, stride=2)
    both = ops.concat([o2.reorg_yolo(fine, [2]), coarse], 1)
    head = _conv(both, 22, num * (coords + classes + 1), 2)
    out = o1.region_yolo(head, coords, classes, num, True, [0, 1], axis, end_axis, [1.0, 2.0, 3.0, 4.0])
    return ov_save(tmp_path / "yolo2.xml", [out], [img], compress_to_fp16=True)


@pytest.mark.parametrize("axis,end_axis", [(1, 3), (2, 3), (0, 1), (1, 2)])
def test_region_yolo_v2_head(tmp_path, axis, end_axis):
    xml = _yolo2(tmp_path, axis=axis, end_axis=end_axis)
    feeds = {"img": np.random.default_rng(3).standard_normal((1, 3, 8, 12)).astype(np.float32)}
    got, want, ov_out = _all(xml, feeds)
    assert got[0].shape == want[0].shape == ov_out[0].shape
    np.testing.assert_allclose(got[0], want[0], **TOL)
    np.testing.assert_allclose(got[0], ov_out[0], **TOL)
    if (axis, end_axis) == (1, 3):  # class scores of each region and position sum to 1
        scores = got[0].reshape(1, 2, 8, 4 * 6)[:, :, 5:, :]
        np.testing.assert_allclose(scores.sum(axis=2), 1, atol=1e-5)


def test_region_yolo_v2_dynamic(tmp_path):
    xml = _yolo2(tmp_path, dynamic=True, coords=2, classes=1, num=3)
    for shape in ((1, 3, 8, 12), (2, 3, 4, 4)):
        feeds = {"img": np.random.default_rng(4).standard_normal(shape).astype(np.float32)}
        got, want, ov_out = _all(xml, feeds)
        np.testing.assert_allclose(got[0], want[0], **TOL)
        np.testing.assert_allclose(got[0], ov_out[0], **TOL)


@pytest.mark.parametrize("dynamic", [False, True])
def test_region_yolo_v3_two_scales(tmp_path, dynamic):
    """YOLO v3: two scales, each RegionYolo without softmax and a mask of 3 of 6 anchors."""
    img = ov_parameter([None, 3, None, None] if dynamic else [1, 3, 8, 8], np.float32, "img")
    anchors = [10.0, 14.0, 23.0, 27.0, 37.0, 58.0, 81.0, 82.0, 135.0, 169.0, 344.0, 319.0]
    outs = []
    for i, (mask, stride) in enumerate((([3, 4, 5], 2), ([0, 1, 2], 1))):
        head = _conv(img, 3, 3 * (4 + 2 + 1), 10 + i, stride)
        outs.append(o1.region_yolo(head, 4, 2, 6, False, mask, 1, 3, anchors))
    xml = ov_save(tmp_path / "yolo3.xml", outs, [img], compress_to_fp16=True)
    feeds = {"img": np.random.default_rng(6).standard_normal((1, 3, 8, 8)).astype(np.float32)}
    got, want, ov_out = _all(xml, feeds)
    for g, w, o in zip(got, want, ov_out):
        assert g.shape == w.shape == o.shape and g.shape[1] == 21
        np.testing.assert_allclose(g, w, **TOL)
        np.testing.assert_allclose(g, o, **TOL)
        sizes = g.reshape(1, 3, 7, -1)[:, :, 2:4]  # w, h pass unchanged, the rest is in (0, 1)
        assert (g.reshape(1, 3, 7, -1)[:, :, [0, 1, 4, 5, 6]] > 0).all() and (sizes < 0).any()


def test_region_yolo_f16(tmp_path):
    x = ov_parameter([1, 2 * 7, 3, 3], np.float16, "x")
    xml = ov_save(tmp_path / "r.xml", [o1.region_yolo(x, 4, 2, 2, True, [0, 1], 1, 3)], [x])
    data = np.random.default_rng(7).standard_normal((1, 14, 3, 3)).astype(np.float16)
    got, want, ov_out = _all(xml, {"x": data})
    assert got[0].dtype == np.float16 and got[0].shape == (1, 126)
    np.testing.assert_allclose(got[0].astype(np.float32), want[0].astype(np.float32), atol=1e-3)
    np.testing.assert_allclose(got[0].astype(np.float32), ov_out[0].astype(np.float32), atol=2e-3)


def test_region_yolo_channel_mismatch_refused(tmp_path):
    x = ov_parameter([1, 16, 3, 3], np.float32, "x")
    xml = ov_save(tmp_path / "r.xml", [o1.region_yolo(x, 4, 2, 2, False, [0], 1, 3)], [x])
    with pytest.raises(UnsupportedLayer, match="channels must be regions"):
        convert(xml)


def test_yolo_sample():
    """samples/yolo: the committed YOLO v2-style IR (ReorgYolo passthrough, RegionYolo with
    softmax, f16 weights, dynamic batch) against OpenVINO's saved output and the runtimes."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "samples" / "yolo"
    xml, img = folder / "yolo.xml", np.load(folder / "img.npy")
    got, want, ov_out = _all(xml, {"img": img})
    assert got[0].shape == (2, 640)
    for other in (want[0], ov_out[0], np.load(folder / "regions.npy")):
        np.testing.assert_allclose(got[0], other, **TOL)
    one = run_onnx(xml, {"img": img[1:]})[0]
    np.testing.assert_allclose(one, got[0][1:], **TOL)
