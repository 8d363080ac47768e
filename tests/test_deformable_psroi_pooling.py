"""DeformablePSROIPooling-1 on OpenVINO-written IR. OpenVINO's CPU plugin runs the op only with
static shapes, so each case is saved twice: static (onnxruntime vs OpenVINO vs the oracle) and with
dynamic dims and run-time coords and offsets (onnxruntime vs the oracle and vs the static model's
OpenVINO result on the same inputs). Tolerance: rtol 1e-5, atol 1e-6 (f32: the same f32 positions
and interpolation order as the plugin, the sum's order may differ); 2e-3 for f16."""
from __future__ import annotations

import numpy as np
import openvino.opset1 as ops1
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_check, ov_parameter, ov_save, run_onnx, run_openvino

TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float16: dict(rtol=2e-3, atol=2e-3)}
MODE = "bilinear_deformable"


def _rois(rng, count, batch=2):
    """Pixel ROIs (integer batch ids) with corners from -8 to 30: some partly outside an 8 x 9 map
    at scale 1/4, some with x2 < x1 (forced to width 0.1)."""
    corner = rng.uniform(-8, 30, (count, 2))
    size = rng.uniform(-4, 20, (count, 2))
    return np.concatenate([rng.integers(0, batch, (count, 1)), corner, corner + size], 1).astype(np.float32)


def _check(tmp_path, make, feeds, dtype=np.float32, dynamic_dims=None):
    """onnxruntime on the static and on the dynamic IR vs the oracle and OpenVINO; returns ort's."""
    def save(name, shapes):
        params = [ov_parameter(shapes[k], dtype, k) for k in feeds]
        return ov_save(tmp_path / f"{name}.xml", make(*params), params)
    static = save("static", {k: v.shape for k, v in feeds.items()})
    dynamic = save("dynamic", {k: (None, v.shape[1]) + (None,) * (v.ndim - 2) for k, v in feeds.items()})
    ov_out = run_openvino(static, feeds)[0]
    for xml in (static, dynamic):
        got = run_onnx(xml, feeds)[0]
        want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
        assert got.dtype == dtype and got.shape == ov_out.shape
        np.testing.assert_allclose(got, want, **TOL[dtype])
        np.testing.assert_allclose(got, ov_out, **TOL[dtype])
    return got


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("dim, group, bins_x, bins_y, scale", [(2, 3, 1, 1, 0.25), (3, 2, 2, 2, 0.25),
                                                               (1, 4, 3, 1, 0.3), (4, 1, 2, 3, 0.125)])
def test_without_offsets(tmp_path, seed, dim, group, bins_x, bins_y, scale):
    rng = np.random.default_rng(seed)
    feeds = {"x": rng.standard_normal((2, dim * group * group, 8, 9)).astype(np.float32), "rois": _rois(rng, 10)}
    make = lambda x, r: ops1.deformable_psroi_pooling(x, r, dim, scale, group, MODE, bins_x, bins_y)  # noqa: E731
    got = _check(tmp_path, make, feeds)
    assert got.shape == (10, dim, group, group) and np.count_nonzero(got) > got.size // 4


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("dim, group, classes, part, bins, std", [(2, 3, 1, 3, 2, 0.1), (4, 2, 2, 4, 2, 0.5),
                                                                  (4, 3, 4, 2, 3, 0.2), (6, 2, 3, 1, 1, 1.0),
                                                                  (3, 4, 1, 3, 4, 0.3)])
def test_with_offsets(tmp_path, seed, dim, group, classes, part, bins, std):
    rng = np.random.default_rng(seed)
    feeds = {"x": rng.standard_normal((2, dim * group * group, 8, 9)).astype(np.float32), "rois": _rois(rng, 8),
             "offsets": rng.uniform(-1, 1, (8, 2 * classes, part, part)).astype(np.float32)}
    make = lambda x, r, t: ops1.deformable_psroi_pooling(x, r, dim, 0.25, group, MODE, bins, bins, std, part,  # noqa: E731
                                                         offsets=t)
    got = _check(tmp_path, make, feeds)
    plain = run_openvino(tmp_path / "static.xml", {**feeds, "offsets": np.zeros_like(feeds["offsets"])})[0]
    assert np.count_nonzero(got) > got.size // 2 and not np.allclose(got, plain)  # the offsets moved the bins


def test_bins_follow_the_offsets(tmp_path):
    """A map whose value is its column (and 100 * its row): bilinear samples are exact, so output
    (i, j) is the mean sample position. ROI (2, 3)-(5, 9) at scale 1: x from 1.5, width 4, bins of
    2, sub-bins of 1; y from 2.5, height 7. Offsets 0.1 (x) and -0.05 (y) shift the bins by 0.4 and
    -0.35: x = 1.5 + 2j + 0.4 + 0.5, y = 2.5 + 3.5i - 0.35 + 0.875 (two and two samples)."""
    rows, cols = np.mgrid[0:12, 0:9].astype(np.float32)
    x = np.broadcast_to(cols + 100 * rows, (1, 4, 12, 9)).copy()
    feeds = {"x": x, "rois": np.array([[0, 2, 3, 5, 9]], np.float32),
             "offsets": np.array([0.1, -0.05], np.float32).reshape(1, 2, 1, 1)}
    make = lambda x, r, t: ops1.deformable_psroi_pooling(x, r, 1, 1.0, 2, MODE, 2, 2, 1.0, 1, offsets=t)  # noqa: E731
    got = _check(tmp_path, make, feeds)
    ys, xs = 2.5 + 3.5 * np.arange(2) - 0.35 + 0.875, 1.5 + 2 * np.arange(2) + 0.4 + 0.5
    np.testing.assert_allclose(got[0, 0], xs[None, :] + 100 * ys[:, None], rtol=1e-6)


def test_position_sensitive_channels(tmp_path):
    """Channel c holds the constant c: output (d, i, j) is (d * group + i) * group + j exactly,
    and 0 for an ROI wholly outside the map (every sample skipped)."""
    x = np.broadcast_to(np.arange(18, dtype=np.float32)[None, :, None, None], (1, 18, 6, 6)).copy()
    feeds = {"x": x, "rois": np.array([[0, 0, 0, 20, 20], [0, 4, 8, 12, 16], [0, 60, 60, 90, 90]], np.float32)}
    make = lambda x, r: ops1.deformable_psroi_pooling(x, r, 2, 0.25, 3, MODE, 2, 2)  # noqa: E731
    got = _check(tmp_path, make, feeds)
    np.testing.assert_array_equal(got[:2], np.broadcast_to(np.arange(18, dtype=np.float32).reshape(2, 3, 3),
                                                           (2, 2, 3, 3)))
    np.testing.assert_array_equal(got[2], 0)


def test_batch_id_minus_one_ends_the_list(tmp_path):
    """The plugin stops at the first ROI whose batch id is -1 (-1.5 truncates to it): that ROI and
    every later one give 0, valid or not."""
    rng = np.random.default_rng(4)
    rois = np.array([[0, 2, 3, 20, 25], [1, 6, 1, 25, 15], [-1.5, 2, 3, 20, 25], [0, 2, 3, 20, 25],
                     [1, 6, 1, 25, 15]], np.float32)
    feeds = {"x": rng.standard_normal((2, 8, 8, 9)).astype(np.float32), "rois": rois,
             "offsets": rng.uniform(-1, 1, (5, 2, 2, 2)).astype(np.float32)}
    make = lambda x, r, t: ops1.deformable_psroi_pooling(x, r, 2, 0.25, 2, MODE, 2, 2, 0.1, 2, offsets=t)  # noqa: E731
    got = _check(tmp_path, make, feeds)
    assert np.count_nonzero(got[:2]) == got[:2].size and not got[2:].any()


def test_bad_batch_id_fails_at_run_time(tmp_path):
    """A batch id past the input (the plugin reads stray memory) fails in onnxruntime."""
    x, r = ov_parameter((None, 4, None, None), np.float32, "x"), ov_parameter((None, 5), np.float32, "rois")
    xml = ov_save(tmp_path / "m.xml", ops1.deformable_psroi_pooling(x, r, 1, 1.0, 2, MODE), [x, r])
    feeds = {"x": np.ones((1, 4, 5, 5), np.float32), "rois": np.array([[0, 1, 1, 3, 3]], np.float32)}
    assert run_onnx(xml, feeds)[0].shape == (1, 1, 2, 2)
    for bad in (1, -3):
        with pytest.raises(Exception, match="(?i)indices|bound|range"):
            run_onnx(xml, {**feeds, "rois": np.array([[bad, 1, 1, 3, 3]], np.float32)})


@pytest.mark.parametrize("offsets", [False, True])
def test_f16(tmp_path, offsets):
    rng = np.random.default_rng(6)
    feeds = {"x": rng.standard_normal((2, 18, 8, 9)).astype(np.float16), "rois": _rois(rng, 6).astype(np.float16)}
    if offsets:
        feeds["offsets"] = rng.standard_normal((6, 4, 3, 3)).astype(np.float16)
    make = lambda x, r, t=None: ops1.deformable_psroi_pooling(x, r, 2, 0.25, 3, MODE, 2, 2, 0.1, 3,  # noqa: E731
                                                              offsets=t)
    _check(tmp_path, make, feeds, np.float16)


def test_check_cli(tmp_path):
    """``ir2onnx check`` agrees (onnxruntime, oracle, OpenVINO) on a model with run-time offsets."""
    rng = np.random.default_rng(8)
    params = [ov_parameter(s, np.float32, n) for s, n in (((1, 32, 8, 9), "x"), ((4, 5), "rois"),
                                                           ((4, 4, 2, 2), "offsets"))]
    xml = ov_save(tmp_path / "m.xml", ops1.deformable_psroi_pooling(*params[:2], 8, 0.25, 2, MODE, 3, 2, 0.2, 2,
                                                                    offsets=params[2]), params)
    assert_check(xml, inputs={"rois": _rois(rng, 4, batch=1), "offsets": rng.standard_normal((4, 4, 2, 2)).astype(
        np.float32)}, rtol=1e-5, atol=1e-6)


def test_deformable_rfcn_head(tmp_path):
    """Deformable R-FCN's head: 1x1 Convs (f16-compressed weights) to classes * k * k score maps
    and to 2 * k * k offset maps; a plain DeformablePSROIPooling of the offset maps gives each ROI
    its [2, k, k] offsets (run time), the deformable pooling of the score maps uses them
    (part_size k, trans_std 0.1); ReduceMean over the k x k cells (the vote), Softmax."""
    classes, k = 3, 3
    rng = np.random.default_rng(11)
    w_score = rng.standard_normal((classes * k * k, 8, 1, 1)).astype(np.float32) * 0.3
    w_off = rng.standard_normal((2 * k * k, 8, 1, 1)).astype(np.float32) * 0.3

    def make(x, r):
        conv = lambda w: ops.convolution(x, ops.constant(w), [1, 1], [0, 0], [0, 0], [1, 1])  # noqa: E731
        offsets = ops1.deformable_psroi_pooling(conv(w_off), r, 2, 1 / 16, k, MODE, 4, 4, 0.0, k)
        pooled = ops1.deformable_psroi_pooling(conv(w_score), r, classes, 1 / 16, k, MODE, 4, 4, 0.1, k,
                                               offsets=offsets)
        return ops.softmax(ops.reduce_mean(pooled, ops.constant(np.array([2, 3])), False), 1)
    x = rng.standard_normal((1, 8, 10, 12)).astype(np.float32)
    rois = np.array([[0, 0, 0, 191, 159], [0, 16, 32, 100, 120], [0, 50, 20, 60, 44], [0, 150, -20, 260, 90]],
                    np.float32)
    saved = []
    for name, xs, rs in (("s", x.shape, rois.shape), ("d", (None, 8, None, None), (None, 5))):
        xp, rp = ov_parameter(xs, np.float32, "x"), ov_parameter(rs, np.float32, "rois")
        saved.append(ov_save(tmp_path / f"{name}.xml", make(xp, rp), [xp, rp], compress_to_fp16=True))
    feeds = {"x": x, "rois": rois}
    ov_out = run_openvino(saved[0], feeds)[0]
    for xml in saved:
        got = run_onnx(xml, feeds)[0]
        want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
        assert got.shape == (4, classes)
        np.testing.assert_allclose(got, ov_out, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert_check(saved[0], inputs=feeds, rtol=1e-5, atol=1e-6)


def _writer_ir(tmp_path, channels, dtype="f32", offsets=None, part=2):
    w = IRWriter("dps")
    ins = [w.parameter([1, channels, 6, 6], dtype, "x"), w.parameter([2, 5], dtype, "rois")]
    if offsets is not None:
        ins.append(w.parameter(offsets, dtype, "offsets"))
    y = w.layer("DeformablePSROIPooling", "opset1", ins, {"output_dim": 2, "group_size": 2, "spatial_scale": 1.0,
                                                           "part_size": part}, [(dtype, [2, 2, 2, 2])],
                out_names=["y"])[0]
    w.result(y)
    return w.save(tmp_path / "w.xml")


def test_refusals(tmp_path):
    convert(_writer_ir(tmp_path, 8, offsets=[2, 4, 2, 2]))  # the well-formed one converts
    with pytest.raises(InvalidLayer, match="channels"):
        convert(_writer_ir(tmp_path, 7))
    with pytest.raises(UnsupportedLayer, match="f16 and f32 only"):
        convert(_writer_ir(tmp_path, 8, "f64"))
    with pytest.raises(InvalidLayer, match="part_size"):
        convert(_writer_ir(tmp_path, 8, offsets=[2, 2, 3, 3]))
    with pytest.raises(InvalidLayer, match="classes"):
        convert(_writer_ir(tmp_path, 8, offsets=[2, 6, 2, 2]))  # 3 classes for output_dim 2
