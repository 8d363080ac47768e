"""PSROIPooling-1 (average, bilinear) on OpenVINO-written IR. OpenVINO's CPU plugin runs the op
only with static shapes, so each case is saved twice: static (onnxruntime vs OpenVINO vs the
oracle) and with dynamic dims and run-time ROIs (onnxruntime vs the oracle and vs the static
model's OpenVINO result on the same inputs). Tolerance: rtol/atol 1e-5 (f32; measured <= 2.4e-7),
2e-3 for f16 data; bilinear f32 equals OpenVINO bit for bit (same f32 order)."""
from __future__ import annotations

import numpy as np
import openvino.opset1 as ops1
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, ov_parameter, ov_save, run_onnx, run_openvino

TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float16: dict(rtol=2e-3, atol=2e-3)}

# pixel ROIs: half-pixel corners, past the map (bins beyond it are empty: 0), negative corners,
# end before start (forced to length 0.1), a whole-map one
AVERAGE = np.array([[0, 0, 0, 15, 13], [1, 2.5, 3.4, 9.6, 7.5], [0, 4, 2, 4, 2], [1, 6, 1, 30, 30],
                    [0, 1, 1, 5, 6], [1, -3, -2.5, 4, 3], [0, 7, 7, 2, 2], [1, 0, 0, 8, 7]], np.float32)
# normalised ROIs: inside, a point, past the right edge, negative corners, end before start
BILINEAR = np.array([[0, 0.1, 0.2, 0.7, 0.9], [1, 0.5, 0.5, 0.5, 0.5], [1, 0.0, 0.1, 1.3, 0.8],
                     [0, -0.2, -0.1, 0.6, 1.0], [1, 0.9, 0.3, 0.2, 0.95]], np.float32)


def _save(tmp_path, name, x_shape, r_shape, dtype, make):
    x, r = ov_parameter(x_shape, dtype, "x"), ov_parameter(r_shape, dtype, "rois")
    return ov_save(tmp_path / f"{name}.xml", make(x, r), [x, r])


def _check(tmp_path, make, x, rois, dtype=np.float32):
    """onnxruntime on the static and on the dynamic IR vs the oracle and OpenVINO; returns ort's."""
    static = _save(tmp_path, "static", x.shape, rois.shape, dtype, make)
    dynamic = _save(tmp_path, "dynamic", (None, x.shape[1], None, None), (None, 5), dtype, make)
    feeds = {"x": x, "rois": rois}
    ov_out = run_openvino(static, feeds)[0]
    for xml in (static, dynamic):
        got = run_onnx(xml, feeds)[0]
        want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
        assert got.dtype == dtype and got.shape == ov_out.shape
        np.testing.assert_allclose(got, want, **TOL[dtype])
        np.testing.assert_allclose(got, ov_out, **TOL[dtype])
    return got


@pytest.mark.parametrize("group, dim", [(3, 2), (1, 4), (2, 3)])
@pytest.mark.parametrize("scale", [1.0, 0.5, 0.25])
def test_average(tmp_path, group, dim, scale):
    x = np.random.default_rng(group).standard_normal((2, dim * group * group, 8, 9)).astype(np.float32)
    got = _check(tmp_path, lambda x, r: ops1.psroi_pooling(x, r, dim, group, scale, 1, 1, "average"), x, AVERAGE)
    assert got.shape == (len(AVERAGE), dim, group, group) and (got != 0).any()


def test_average_whole_map_is_the_channel_mean(tmp_path):
    """group 1, one ROI over the whole 8 x 9 map at scale 1: each output is its channel's mean."""
    x = np.random.default_rng(5).standard_normal((1, 4, 8, 9)).astype(np.float32)
    rois = np.array([[0, 0, 0, 8, 7]], np.float32)  # x2 = 8 -> end 9 (W), y2 = 7 -> end 8 (H)
    got = _check(tmp_path, lambda x, r: ops1.psroi_pooling(x, r, 4, 1, 1.0, 1, 1, "average"), x, rois)
    np.testing.assert_allclose(got[0, :, 0, 0], x[0].mean(axis=(1, 2)), rtol=1e-6, atol=1e-6)


def test_average_position_sensitive_channels(tmp_path):
    """Channel c holds the constant c: output (d, i, j) is (d * group + i) * group + j exactly."""
    x = np.broadcast_to(np.arange(18, dtype=np.float32)[None, :, None, None], (1, 18, 6, 6)).copy()
    rois = np.array([[0, 0, 0, 5, 5], [0, 1, 2, 4, 3]], np.float32)
    got = _check(tmp_path, lambda x, r: ops1.psroi_pooling(x, r, 2, 3, 1.0, 1, 1, "average"), x, rois)
    np.testing.assert_array_equal(got, np.broadcast_to(np.arange(18, dtype=np.float32).reshape(2, 3, 3), got.shape))


@pytest.mark.parametrize("group, bins_x, bins_y, scale", [(2, 2, 2, 1.0), (3, 1, 3, 0.5), (1, 2, 2, 1.0),
                                                          (2, 3, 1, 1.0), (4, 1, 1, 2.0)])
def test_bilinear(tmp_path, group, bins_x, bins_y, scale):
    x = np.random.default_rng(group + bins_x).standard_normal((2, 12, 7, 6)).astype(np.float32)
    dim = 12 // (bins_x * bins_y)
    make = lambda x, r: ops1.psroi_pooling(x, r, dim, group, scale, bins_x, bins_y, "bilinear")  # noqa: E731
    got = _check(tmp_path, make, x, BILINEAR)
    np.testing.assert_array_equal(got, run_openvino(tmp_path / "static.xml", {"x": x, "rois": BILINEAR})[0])
    assert got.shape == (len(BILINEAR), dim, group, group) and (got != 0).any()


def test_bilinear_corner_samples(tmp_path):
    """group 2, one bin, ROI (0, 0)-(1, 1): the samples are the map's four corners exactly."""
    x = np.random.default_rng(7).standard_normal((1, 3, 5, 4)).astype(np.float32)
    rois = np.array([[0, 0, 0, 1, 1]], np.float32)
    got = _check(tmp_path, lambda x, r: ops1.psroi_pooling(x, r, 3, 2, 1.0, 1, 1, "bilinear"), x, rois)
    np.testing.assert_array_equal(got[0], x[0][:, [0, -1]][:, :, [0, -1]])


@pytest.mark.parametrize("mode", ["average", "bilinear"])
def test_f16(tmp_path, mode):
    rng = np.random.default_rng(3)
    if mode == "average":
        x, rois, args = rng.standard_normal((2, 8, 8, 9)).astype(np.float16), AVERAGE, (2, 2, 0.5, 1, 1)
    else:
        x, rois, args = rng.standard_normal((2, 12, 7, 6)).astype(np.float16), BILINEAR, (3, 2, 1.0, 2, 2)
    _check(tmp_path, lambda x, r: ops1.psroi_pooling(x, r, *args, mode), x, rois.astype(np.float16), np.float16)


def test_rfcn_head(tmp_path):
    """R-FCN's classification head: 1x1 Conv (f16-compressed weights) to classes * k * k score
    maps, PSROIPooling average at stride 1/16 on run-time ROIs, ReduceMean over the k x k cells
    (the vote), Softmax."""
    classes, k = 3, 3
    rng = np.random.default_rng(11)
    w = rng.standard_normal((classes * k * k, 8, 1, 1)).astype(np.float32) * 0.3

    def make(x, r):
        conv = ops.convolution(x, ops.constant(w), [1, 1], [0, 0], [0, 0], [1, 1])
        pooled = ops1.psroi_pooling(conv, r, classes, k, 1 / 16, 1, 1, "average")
        return ops.softmax(ops.reduce_mean(pooled, ops.constant(np.array([2, 3])), False), 1)
    x = rng.standard_normal((1, 8, 10, 12)).astype(np.float32)
    rois = np.array([[0, 0, 0, 191, 159], [0, 16, 32, 100, 120], [0, 50, 20, 60, 44]], np.float32)
    xp, rp = ov_parameter(x.shape, np.float32, "x"), ov_parameter(rois.shape, np.float32, "rois")
    static = ov_save(tmp_path / "s.xml", make(xp, rp), [xp, rp], compress_to_fp16=True)
    xd, rd = ov_parameter((None, 8, None, None), np.float32, "x"), ov_parameter((None, 5), np.float32, "rois")
    dynamic = ov_save(tmp_path / "d.xml", make(xd, rd), [xd, rd], compress_to_fp16=True)
    feeds = {"x": x, "rois": rois}
    ov_out = run_openvino(static, feeds)[0]
    for xml in (static, dynamic):
        got = run_onnx(xml, feeds)[0]
        want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
        assert got.shape == (3, classes)
        np.testing.assert_allclose(got, ov_out, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)



@pytest.mark.parametrize("mode", ["average", "bilinear"])
@pytest.mark.parametrize("end", [(2, -1.0), (1, -1.4), (0, -1.0), (None, None)])
def test_ends_at_batch_id_minus_one(tmp_path, mode, end):
    """Proposal's output (image 0's rois, its end row -1, zeros, image 1's rois): the first ROI
    whose batch id truncates to -1 ends the list, as OpenVINO's CPU plugin runs it: that ROI and
    every later one, image 1's too, give 0; an id in (-1, 0) is image 0. Before, the -1 row
    pooled image N - 1 (a wrapped Gather index) and the later rois their images."""
    rois = np.array([[0, 1, 2, 9, 10], [0, 4, 0, 12, 7], [-1, 0, 0, 0, 0], [0, 0, 0, 0, 0],
                     [1, 2, 3, 8, 9], [1, 0, 1, 14, 12]], np.float32)
    at, value = end
    if at is None:
        rois[2, 0] = -0.6
    else:
        rois[at, 0] = value
    if mode == "average":
        args, channels = (2, 3, 0.5, 1, 1), 18
    else:
        args, channels, rois[:, 1:] = (2, 2, 1.0, 2, 3), 12, rois[:, 1:] / 16
    x = np.random.default_rng(6).uniform(1, 2, (2, channels, 8, 8)).astype(np.float32)
    got = _check(tmp_path, lambda x, r: ops1.psroi_pooling(x, r, *args, mode), x, rois)
    live = len(rois) if at is None else at
    assert all(got[k].max() > 0 for k in range(live)) and not got[live:].any()


@pytest.mark.parametrize("mode", ["average", "bilinear"])
def test_rfcn_sized(tmp_path, mode):
    """An R-FCN-sized head (120 ROIs, group 7, 245 or 80 channels, a 24 x 32 map): only the
    needed cells are gathered, and the result matches OpenVINO."""
    rng = np.random.default_rng(9)
    corner = rng.uniform(0, 400, (120, 2))
    rois = np.concatenate([rng.integers(0, 2, (120, 1)), corner, corner + rng.uniform(8, 200, (120, 2))], 1)
    if mode == "average":
        args, channels, rois = (5, 7, 1 / 16, 1, 1), 245, rois.astype(np.float32)
    else:
        args, channels, rois = (20, 7, 1.0, 2, 2), 80, (rois / [1, 512, 384, 512, 384]).astype(np.float32)
    x = rng.standard_normal((2, channels, 24, 32)).astype(np.float32)
    got = _check(tmp_path, lambda x, r: ops1.psroi_pooling(x, r, *args, mode), x, rois)
    assert got.shape == (120, args[0], 7, 7) and np.count_nonzero(got) > got.size // 2


def _writer_ir(tmp_path, channels, dtype="f32"):
    w = IRWriter("ps")
    x = w.parameter([1, channels, 6, 6], dtype, "x")
    r = w.parameter([2, 5], dtype, "rois")
    y = w.layer("PSROIPooling", "opset1", [x, r], {"output_dim": 2, "group_size": 2, "spatial_scale": 1.0,
                                                    "mode": "average"}, [(dtype, [2, 2, 2, 2])], out_names=["y"])[0]
    w.result(y)
    return w.save(tmp_path / "w.xml")


def test_refusals(tmp_path):
    with pytest.raises(InvalidLayer, match="channels"):
        convert(_writer_ir(tmp_path, 7))
    with pytest.raises(UnsupportedLayer, match="f16 and f32 only"):
        convert(_writer_ir(tmp_path, 8, "f64"))
