"""Interpolate-4/-11 on OpenVINO-written IR against the spec oracle and the OpenVINO runtime:
nearest bit for bit; linear, linear_onnx and cubic within f32 rtol 1e-5, atol 1e-5."""
from __future__ import annotations

import numpy as np
import openvino.opset11 as o11
import openvino.opset15 as ops
import pytest
from openvino.utils.node_factory import NodeFactory

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

TOL = dict(rtol=1e-5, atol=1e-5)


def _i64(v):
    return ops.constant(np.array(v, np.int64))


def _f32(v):
    return ops.constant(np.array(v, np.float32))


def interp4(x, sizes, scales, axes, mode, calc="sizes", **attrs):
    a = dict(mode=mode, shape_calculation_mode=calc, coordinate_transformation_mode="half_pixel",
             nearest_mode="round_prefer_floor", antialias=False, pads_begin=[0], pads_end=[0], cube_coeff=-0.75)
    a.update(attrs)
    ins = [x, _i64(sizes), _f32(scales)] + ([_i64(axes)] if axes is not None else [])
    return NodeFactory("opset4").create("Interpolate", [n.output(0) for n in ins], a)


def interp11(x, target, axes, mode, calc="scales", **kw):
    t = _f32(target) if calc == "scales" else _i64(target)
    return o11.interpolate(x, t, mode, calc, axes=None if axes is None else _i64(axes), **kw)


def _check(xml, x, exact, opsets=(17, 18)):
    return _check_feeds(xml, {"x": x}, exact, opsets)


def _check_feeds(xml, feeds, exact, opsets=(14, 17, 18)):
    """onnxruntime at each opset against the oracle interpreter and OpenVINO; returns the oracle's."""
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    ov_out = run_openvino(xml, feeds)[0]
    for opset in opsets:
        got = run_onnx(xml, feeds, opset=opset)[0]
        if exact:
            assert_bitexact(got, want, f"oracle opset {opset}")
            assert_bitexact(got, ov_out, f"openvino opset {opset}")
        else:
            np.testing.assert_allclose(got, want, **TOL)
            np.testing.assert_allclose(got, ov_out, **TOL)
    return want


def _data(shape, dtype=np.float32):
    rng = np.random.default_rng(13)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0, 100, shape).astype(dtype)


CTMS = ["half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners"]


@pytest.mark.parametrize("ctm", CTMS)
@pytest.mark.parametrize("rounding", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
@pytest.mark.parametrize("sizes", [[7, 9], [2, 3]])
def test_nearest_sizes(tmp_path, ctm, rounding, sizes):
    x = ov_parameter([1, 2, 4, 5], np.float32, "x")
    y = interp4(x, sizes, [1, 1], [2, 3], "nearest", coordinate_transformation_mode=ctm, nearest_mode=rounding)
    xml = ov_save(tmp_path / "m.xml", y, [x])
    _check(xml, _data((1, 2, 4, 5)), exact=True)


@pytest.mark.parametrize("mode", ["linear", "linear_onnx", "cubic"])
@pytest.mark.parametrize("ctm", CTMS)
@pytest.mark.parametrize("scales", [[2.0, 2.0], [0.5, 0.75], [1.5, 2.5]])
def test_smooth_modes_scales(tmp_path, mode, ctm, scales):
    x = ov_parameter([1, 2, 4, 6], np.float32, "x")
    y = interp11(x, scales, [2, 3], mode, coordinate_transformation_mode=ctm)
    xml = ov_save(tmp_path / "m.xml", y, [x])
    _check(xml, _data((1, 2, 4, 6)), exact=False)


@pytest.mark.parametrize("mode", ["nearest", "linear_onnx", "cubic"])
def test_interpolate4_scales_pads_and_default_axes(tmp_path, mode):
    x = ov_parameter([1, 1, 3, 4], np.float32, "x")
    y = interp4(x, [1, 1, 1, 1], [1.0, 1.0, 2.0, 1.5], None, mode, "scales", pads_begin=[0, 0, 1, 0],
                pads_end=[0, 0, 0, 2], cube_coeff=-0.5)
    xml = ov_save(tmp_path / "m.xml", y, [x])
    out = _check(xml, _data((1, 1, 3, 4)), exact=mode == "nearest")
    assert out.shape == (1, 1, 8, 9)


def test_upsample_x2_dynamic_spatial(tmp_path):
    """YOLO-style nearest x2 upsample on a dynamic-size input (integer scales are exact)."""
    x = ov_parameter([1, 3, None, None], np.float32, "x")
    y = interp11(x, [2.0, 2.0], [2, 3], "nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    xml = ov_save(tmp_path / "m.xml", y, [x])
    data = _data((1, 3, 3, 5))
    got = _check(xml, data, exact=True)
    assert_bitexact(got, data.repeat(2, axis=2).repeat(2, axis=3))


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float16])
def test_nearest_types(tmp_path, dtype):
    x = ov_parameter([2, 5], dtype, "x")
    y = interp11(x, [3, 8], [0, 1], "nearest", "sizes")
    xml = ov_save(tmp_path / "m.xml", y, [x])
    _check(xml, _data((2, 5), dtype), exact=True)


def test_linear_f16(tmp_path):
    x = ov_parameter([1, 1, 3, 3], np.float16, "x")
    xml = ov_save(tmp_path / "m.xml", interp11(x, [5, 4], [2, 3], "linear_onnx", "sizes"), [x])
    data = _data((1, 1, 3, 3), np.float16)
    got = run_onnx(xml, {"x": data})[0]
    want = next(iter(evaluate(ir2onnx.load_ir(xml), {"x": data}).values()))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(got, run_openvino(xml, {"x": data})[0], rtol=2e-3, atol=2e-3)


def test_sizes_with_dynamic_batch_opset17(tmp_path):
    x = ov_parameter([None, 2, 3, 3], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", interp11(x, [6, 5], [2, 3], "linear", "sizes"), [x])
    _check(xml, _data((2, 2, 3, 3)), exact=False)


def test_linear_onnx_matches_numpy_example(tmp_path):
    """align_corners 1-D [0, 3] -> 4 points is [0, 1, 2, 3]."""
    x = ov_parameter([2], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", interp11(x, [4], None, "linear_onnx", "sizes",
                                               coordinate_transformation_mode="align_corners"), [x])
    got = _check(xml, np.array([0, 3], np.float32), exact=False)
    np.testing.assert_allclose(got, [0, 1, 2, 3], atol=1e-6)


@pytest.mark.parametrize("kw,match", [
    (dict(antialias=True), "antialias"),
    (dict(coordinate_transformation_mode="tf_half_pixel_for_nn"), "tf_half_pixel_for_nn"),
    (dict(nearest_mode="simple"), "simple"),
])
def test_refused_attributes(tmp_path, kw, match):
    x = ov_parameter([1, 1, 4, 4], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", interp11(x, [2.0, 2.0], [2, 3], "nearest", **kw), [x])
    with pytest.raises(UnsupportedLayer, match=match):
        convert(xml)


def test_pillow_refused(tmp_path):
    x = ov_parameter([1, 1, 4, 4], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", interp11(x, [2.0, 2.0], [2, 3], "bilinear_pillow"), [x])
    with pytest.raises(UnsupportedLayer, match="bilinear_pillow"):
        convert(xml)


def test_scale_whose_size_differs_keeps_openvinos_size(tmp_path):
    """OpenVINO: trunc(7 * (4.428571 + 1e-6)) = 31, ONNX: trunc(7 * 4.428571) = 30: the graph
    extends the input and crops to 31 (pytorch_half_pixel: refused)."""
    x = ov_parameter([1, 7], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", interp11(x, [31 / 7], [1], "nearest"), [x])
    assert ir2onnx.load_ir(xml).order[-2].outputs[0].shape == (1, 31)
    assert _check(xml, _data((1, 7)), exact=True).shape == (1, 31)
    xml = ov_save(tmp_path / "p.xml", interp11(x, [31 / 7], [1], "nearest",
                                               coordinate_transformation_mode="pytorch_half_pixel"), [x])
    with pytest.raises(UnsupportedLayer, match="OpenVINO makes 31 elements, ONNX Resize 30"):
        convert(xml)


def test_fractional_scale_on_dynamic_dim(tmp_path):
    x = ov_parameter([1, None], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", interp11(x, [1.5], [1], "nearest"), [x])
    for n in (3, 4, 7):
        _check(xml, _data((1, n)), exact=True)


def test_cubic_on_rank3_is_refused(tmp_path):
    x = ov_parameter([2, 3, 4], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", interp11(x, [2.0], [1], "cubic"), [x])
    with pytest.raises(UnsupportedLayer, match="cubic interpolation of axes"):
        convert(xml)


def test_cubic_1d(tmp_path):
    x = ov_parameter([5], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", interp11(x, [9], None, "cubic", "sizes"), [x])
    _check(xml, _data((5,)), exact=False)


def test_repeated_axes_are_invalid(tmp_path):
    w = IRWriter()
    x = w.parameter([1, 1, 4, 4], "f32", "x")
    attrs = dict(mode="nearest", shape_calculation_mode="sizes")
    y = w.layer("Interpolate", "opset11", [x, w.const(np.array([8, 8])), w.const(np.array([2, 2]))], attrs,
                [("f32", [1, 1, 8, 4])], name="interp")[0]
    w.result(y)
    with pytest.raises(InvalidLayer, match="interp.*distinct"):
        convert(w.save(tmp_path / "bad.xml"))


def test_f64_refused(tmp_path):
    """onnxruntime's Resize has no f64 kernel and a round trip through f32 would lose bits."""
    x = ov_parameter([1, 4], np.float64, "x")
    xml = ov_save(tmp_path / "m.xml", interp11(x, [2.0], [1], "nearest"), [x])
    with pytest.raises(UnsupportedLayer, match="nearest interpolation of f64"):
        convert(xml)


@pytest.mark.parametrize("mode", ["linear_onnx", "cubic"])
def test_1d_by_scales_before_opset18(tmp_path, mode):
    """Regression (fuzzing): a rank-1 input resized by scales (linear/cubic go through an
    Unsqueeze to 2-D) crashed with an IndexError below ONNX opset 18 (scales sized for rank 1)."""
    x = ov_parameter([3], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", interp11(x, [2.0], None, mode, "scales",
                                               coordinate_transformation_mode="asymmetric"), [x])
    _check(xml, _data((3,)), exact=False, opsets=(14, 17, 18))


@pytest.mark.parametrize("target,calc,ok", [([0.75], "scales", False), ([3], "sizes", False),
                                            ([1.5], "scales", True), ([6], "sizes", True)])
def test_cubic_nhwc_downscaling_is_refused(tmp_path, target, calc, ok):
    """Regression (fuzzing): cubic on axis 1 of a 4-D tensor (NHWC) converted, but onnxruntime
    refuses to load a Resize that shrinks there (it upsamples NHWC only); now UnsupportedLayer."""
    x = ov_parameter([1, 4, 6, 3], np.float32, "x")
    xml = ov_save(tmp_path / "m.xml", interp11(x, target, [1], "cubic", calc), [x])
    if ok:
        _check(xml, _data((1, 4, 6, 3)), exact=False)
    else:
        with pytest.raises(UnsupportedLayer, match="NHWC only upsampling"):
            convert(xml)


@pytest.mark.parametrize("mode", ["nearest", "linear_onnx", "linear", "cubic"])
@pytest.mark.parametrize("version", [4, 11])
def test_runtime_sizes_from_another_map(tmp_path, mode, version):
    """FPN's "resize to the other map's size": sizes = ShapeOf(skip)[2:4] on dynamic spatial dims,
    known only at run time; up- and downsampling from the same file, at opsets 14, 17 and 18."""
    x = ov_parameter([1, 3, None, None], np.float32, "x")
    skip = ov_parameter([1, 2, None, None], np.float32, "skip")
    sizes = ops.gather(ops.shape_of(skip), _i64([2, 3]), _i64(0))
    if version == 11:
        y = o11.interpolate(x, sizes, mode, "sizes", axes=_i64([2, 3]))
    else:
        a = dict(mode=mode, shape_calculation_mode="sizes", coordinate_transformation_mode="half_pixel",
                 nearest_mode="round_prefer_floor", antialias=False, pads_begin=[0], pads_end=[0], cube_coeff=-0.75)
        ins = [x.output(0), sizes.output(0), _f32([1.0, 1.0]).output(0), _i64([2, 3]).output(0)]
        y = NodeFactory("opset4").create("Interpolate", ins, a)
    xml = ov_save(tmp_path / "m.xml", y, [x, skip])
    assert "Resize" in [n.op_type for n in convert(xml).graph.node]
    for xs, ss in (((1, 3, 4, 5), (1, 2, 8, 7)), ((1, 3, 6, 6), (1, 2, 3, 4))):
        feeds = {"x": _data(xs), "skip": _data(ss)}
        got = _check_feeds(xml, feeds, exact=mode == "nearest")
        assert got.shape == (1, 3) + ss[2:]


def test_runtime_sizes_without_axes_and_with_pads(tmp_path):
    """Interpolate-11 without axes (sizes for every dim, from a Parameter) and with pads."""
    x = ov_parameter([1, 2, 3, 4], np.float32, "x")
    sizes = ov_parameter([4], np.int32, "sizes")
    y = o11.interpolate(x, sizes, "nearest", "sizes", pads_begin=[0, 0, 1, 0], pads_end=[0, 0, 0, 2])
    xml = ov_save(tmp_path / "m.xml", y, [x, sizes])
    feeds = {"x": _data((1, 2, 3, 4)), "sizes": np.array([1, 2, 7, 3], np.int32)}
    assert _check_feeds(xml, feeds, exact=True).shape == (1, 2, 7, 3)


def test_runtime_sizes_respect_the_layout_rules(tmp_path):
    """Run-time sizes may shrink any listed axis: cubic on NHWC axes is refused (onnxruntime
    upsamples NHWC only), on NCHW axes accepted."""
    x = ov_parameter([1, 4, 6, 3], np.float32, "x")
    sizes = ov_parameter([2], np.int64, "sizes")
    xml = ov_save(tmp_path / "m.xml", o11.interpolate(x, sizes, "cubic", "sizes", axes=_i64([1, 2])), [x, sizes])
    with pytest.raises(UnsupportedLayer, match="NHWC only upsampling"):
        convert(xml)


# -- scales fed at run time -------------------------------------------------------------------------
@pytest.mark.parametrize("ctm", ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"])
@pytest.mark.parametrize("mode", ["nearest", "linear_onnx", "linear", "cubic"])
def test_run_time_scales(tmp_path, mode, ctm):
    if ctm == "pytorch_half_pixel" and mode != "nearest":
        return  # refused: test_run_time_scales_pytorch_half_pixel_is_refused
    """Scales are a Parameter, spatial dims dynamic (several sizes); among the scales, ones whose
    ONNX size trunc(d*s) falls one short of OpenVINO's trunc(d*(s+1e-6)) (0.5555555 on 9,
    1.6666666 on 3, 0.6999999 on 10): OpenVINO's size and coordinates (by the scale) both kept."""
    x = ov_parameter([1, 2, None, None], np.float32, "x")
    s = ov_parameter([2], np.float32, "s")
    node = o11.interpolate(x, s, mode, "scales", axes=_i64([2, 3]), coordinate_transformation_mode=ctm,
                           nearest_mode="round_prefer_floor")
    xml = ov_save(tmp_path / "s.xml", node, [x, s])
    cases = [((1, 2, 9, 3), [0.5555555, 1.6666666]), ((1, 2, 7, 5), [0.6, 1.7]),
             ((1, 2, 4, 6), [2.0, 0.5]), ((1, 2, 3, 3), [1.0, 2.5])]
    cases.append(((1, 2, 10, 2), [0.6999999, 1.4999999]))  # nearest: a coordinate next to a tie
    for shape, scales in cases:
        feeds = {"x": _data(shape), "s": np.array(scales, np.float32)}
        want = _check_feeds(xml, feeds, exact=mode == "nearest", opsets=(17, 18))
        assert want.shape[2:] == tuple(int(np.float32(d) * (np.float32(v) + np.float32(1e-6)))
                                       for d, v in zip(shape[2:], scales))


def test_run_time_scales_pytorch_half_pixel_is_refused(tmp_path):
    x, s = ov_parameter([1, 1, None, None], np.float32, "x"), ov_parameter([2], np.float32, "s")
    node = o11.interpolate(x, s, "linear", "scales", axes=_i64([2, 3]), coordinate_transformation_mode="pytorch_half_pixel")
    with pytest.raises(UnsupportedLayer, match="pytorch_half_pixel"):
        convert(ov_save(tmp_path / "p.xml", node, [x, s]))


@pytest.mark.parametrize("rounding", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.float16])
def test_run_time_scales_nearest_modes_and_types(tmp_path, rounding, dtype):
    """Nearest with run-time scales: the indices computed in the graph, Gather: bit for bit, any
    element type, exact ties (scale 2, 0.5) and a coordinate next to one (0.6999999 on 10)."""
    x = ov_parameter([1, 1, None, None], dtype, "x")
    s = ov_parameter([2], np.float32, "s")
    node = o11.interpolate(x, s, "nearest", "scales", axes=_i64([2, 3]), nearest_mode=rounding,
                           coordinate_transformation_mode="half_pixel")
    xml = ov_save(tmp_path / "n.xml", node, [x, s])
    for shape, scales in (((1, 1, 10, 4), [0.6999999, 2.0]), ((1, 1, 6, 7), [0.5, 1.3]), ((1, 1, 1, 3), [3.0, 0.4])):
        _check_feeds(xml, {"x": _data(shape, dtype), "s": np.array(scales, np.float32)}, exact=True, opsets=(17,))
