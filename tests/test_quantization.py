"""FakeQuantize-1 on OpenVINO-written IR against OpenVINO's CPU plugin and the spec oracle.

Tolerances (measured, see ir2onnx/ops/quantization.py): the quantization level is exact (ties to
even included); outputs are bit-exact with OpenVINO where it runs its kernel as is (levels 16, 2,
run-time ranges, il > ih) and within a few f32 ulps (rtol 1e-6) where its low-precision
transformations rewrite levels 255/256; bit-exact everywhere with the kernel model
``kernel_fold``. Against the float64 spec oracle: equal within 1e-5 except where a tie flips,
then one output step.
"""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

from ir2onnx.api import convert
from ir2onnx.cli.main import main
from ir2onnx.errors import InvalidLayer
from ir2onnx.ir.reader import load_ir
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.ops.quantization import kernel_fold, kernel_params
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

F32 = np.float32
PER_CHANNEL = (np.array([-1.0, -0.7, 0.0], F32).reshape(1, 3, 1, 1),
               np.array([1.0, 1.3, 2.55], F32).reshape(1, 3, 1, 1))


def _ir(path, shape, ranges, levels, dtype=F32, compress=False, batch_dynamic=False):
    x = ov_parameter([None, *shape[1:]] if batch_dynamic else list(shape), dtype)
    consts = [ops.constant(np.asarray(r, dtype)) for r in ranges]
    return ov_save(path, ops.fake_quantize(x, *consts, levels), [x], compress_to_fp16=compress)


def _data(shape, ranges, dtype=F32, seed=0):
    """Values across and beyond the input range, with exact ties and the range ends."""
    lo, hi = float(np.min(ranges[0])), float(np.max(ranges[1]))
    x = np.random.default_rng(seed).uniform(lo - 0.5 * (hi - lo), hi + 0.5 * (hi - lo), shape)
    x.ravel()[:4] = [lo, hi, lo - 1, hi + 1]
    return x.astype(dtype)


def _oracle(xml, x):
    return list(evaluate(load_ir(xml), {"x": x}).values())[0]


def _close_or_one_step(a, b, step):
    a, b = a.astype(np.float64), b.astype(np.float64)
    ok = np.isclose(a, b, rtol=1e-5, atol=1e-5) | np.isclose(np.abs(a - b), np.broadcast_to(step, a.shape), rtol=1e-3)
    assert ok.all(), f"{np.count_nonzero(~ok)} elements differ by more than one step"


@pytest.mark.parametrize("levels", [256, 255, 16, 2])
@pytest.mark.parametrize("per_channel", [False, True])
def test_against_openvino_kernel_and_oracle(tmp_path, levels, per_channel):
    il, ih = PER_CHANNEL if per_channel else (F32(-0.7), F32(1.3))
    ranges = (il, ih, il * 2, ih * 3)
    shape = (2, 3, 5, 6)
    xml = _ir(tmp_path / "m.xml", shape, ranges, levels)
    x = _data(shape, ranges)
    got, = run_onnx(xml, [x])
    ov, = run_openvino(xml, [x])
    assert_bitexact(got, kernel_fold(x, kernel_params(*ranges, levels)), "kernel model")
    if levels in (16, 2):
        assert_bitexact(got, ov, "openvino")
    np.testing.assert_allclose(got, ov, rtol=1e-6, atol=1e-6)
    step = (np.asarray(ranges[3]) * 1.0 - ranges[2]) / (levels - 1)
    _close_or_one_step(got, _oracle(xml, x), step)


def test_ties_round_half_to_even(tmp_path):
    ranges = (F32(0), F32(4), F32(0), F32(40))  # input scale 1: x.5 values are exact ties
    x = np.arange(-1, 5.5, 0.5, dtype=F32).reshape(1, 1, 1, -1)
    xml = _ir(tmp_path / "m.xml", x.shape, ranges, 5)
    got, = run_onnx(xml, [x])
    want = np.array([0, 0, 0, 0, 10, 20, 20, 20, 30, 40, 40, 40, 40], F32).reshape(x.shape)
    assert_bitexact(got, want)
    assert_bitexact(got, run_openvino(xml, [x])[0])
    assert_bitexact(_oracle(xml, x), want)


@pytest.mark.parametrize("ranges", [(1.0, -1.0, -2.0, 2.0), (0.5, 0.5, -1.0, 2.0)], ids=["il>ih", "il==ih"])
def test_degenerate_input_ranges_follow_the_framework(tmp_path, ranges):
    """il >= ih: ol on il's side of il, oh on ih's side of ih, the formula between (what the source
    ONNX model computes for QuantizeLinear with a negative scale, tests/test_framework_round_trips.py;
    il == ih splits at il like the spec); OpenVINO 2026.4's CPU kernel gives ol everywhere
    (il > ih) or NaN (il == ih). The OpenVINO asserts fail if OpenVINO changes."""
    x = np.array([-3, -1, -0.5, 0, 0.25, 0.5, 1, 2], F32).reshape(1, 1, 1, 8)
    xml = _ir(tmp_path / "m.xml", x.shape, ranges, 16)
    got, = run_onnx(xml, [x])
    ov, = run_openvino(xml, [x])
    np.testing.assert_allclose(got, _oracle(xml, x), rtol=1e-6, atol=1e-6)
    if ranges[0] == ranges[1]:
        assert_bitexact(got, np.array([-1] * 6 + [2, 2], F32).reshape(x.shape))
        assert np.isnan(ov).all()
    else:  # x <= ih = -1: oh; x >= il = 1: ol; 15 * (1 - x) / 2 between: 11.25, 7.5 (tie -> 8), 5.625, 3.75
        mid = np.array([11, 8, 6, 4]) / 15 * 4 - 2
        np.testing.assert_allclose(got.reshape(-1), [2, 2, *mid, -2, -2], rtol=1e-6, atol=1e-6)
        assert (ov == -2.0).all()


def test_f16_data_and_ranges(tmp_path):
    il, ih = PER_CHANNEL
    ranges = (il, ih, il, ih)
    shape = (1, 3, 4, 8)
    xml = _ir(tmp_path / "m.xml", shape, ranges, 256, dtype=np.float16)
    x = _data(shape, ranges, np.float16)
    got, = run_onnx(xml, [x])
    ov, = run_openvino(xml, [x])
    assert got.dtype == np.float16
    r16 = [np.asarray(r, np.float16) for r in ranges]
    assert_bitexact(got, kernel_fold(x, kernel_params(*r16, 256)).astype(np.float16))
    np.testing.assert_allclose(got.astype(F32), ov.astype(F32), rtol=1e-3, atol=1e-3)


def test_f16_compressed_ranges_and_dynamic_batch(tmp_path):
    """f16 range Consts decompressed by Convert (OpenVINO's own compress_to_fp16 keeps FakeQuantize
    ranges in f32, so the IR is written by hand), with a dynamic batch."""
    il, ih = PER_CHANNEL
    ranges = (il * 1.1, ih * 0.9, il, ih)
    w = IRWriter("fq16")
    x = w.parameter((None, 3, 4, 4), name="x")
    r = [w.layer("Convert", "opset1", [w.const(np.asarray(v, np.float16))], {"destination_type": "f32"},
                 [("f32", (1, 3, 1, 1))])[0] for v in ranges]
    y, = w.layer("FakeQuantize", "opset1", [x, *r], {"levels": 255, "auto_broadcast": "numpy"},
                 [("f32", (None, 3, 4, 4))], out_names=["y"])
    w.result(y)
    xml = w.save(tmp_path / "m.xml")
    x = _data((3, 3, 4, 4), ranges, seed=1)
    got, = run_onnx(xml, [x])
    np.testing.assert_allclose(got, run_openvino(xml, [x])[0], rtol=1e-6, atol=1e-6)
    r16 = [np.asarray(np.asarray(v, np.float16), F32) for v in ranges]
    assert_bitexact(got, kernel_fold(x, kernel_params(*r16, 255)))
    _close_or_one_step(got, _oracle(xml, x), (r16[3] - r16[2]) / 254)


def test_openvino_compress_to_fp16(tmp_path):
    ranges = (F32(-0.7), F32(1.3), F32(-0.7), F32(1.3))
    xml = _ir(tmp_path / "m.xml", (1, 3, 4, 4), ranges, 256, compress=True)
    x = _data((1, 3, 4, 4), ranges, seed=3)
    got, = run_onnx(xml, [x])
    np.testing.assert_allclose(got, run_openvino(xml, [x])[0], rtol=1e-6, atol=1e-6)
    assert_bitexact(got, kernel_fold(x, kernel_params(*ranges, 256)))


def test_run_time_ranges_match_openvino_bit_for_bit(tmp_path):
    x = ov_parameter([1, 3, 4, 4])
    ps = [ov_parameter([1, 3, 1, 1], name=n) for n in ("il", "ih", "ol", "oh")]
    xml = ov_save(tmp_path / "m.xml", ops.fake_quantize(x, *ps, 256), [x, *ps])
    il, ih = PER_CHANNEL
    feeds = [_data((1, 3, 4, 4), (il, ih), seed=2), il, ih, il * 0.5, ih * 2]
    got, = run_onnx(xml, feeds)
    assert_bitexact(got, run_openvino(xml, feeds)[0])
    oracle = list(evaluate(load_ir(xml), dict(zip(["x", "il", "ih", "ol", "oh"], feeds))).values())[0]
    _close_or_one_step(got, oracle, (ih * 2 - il * 0.5) / 255)


def test_convolution_fed_by_fake_quantize_nncf_pattern(tmp_path):
    rng = np.random.default_rng(4)
    x = ov_parameter([1, 3, 8, 8])
    fq_x = ops.fake_quantize(x, *[ops.constant(F32(v)) for v in (0.0, 2.55, 0.0, 2.55)], 256)
    w = rng.standard_normal((4, 3, 3, 3)).astype(F32)
    wl = -np.abs(w).max(axis=(1, 2, 3), keepdims=True)
    wc = [ops.constant(v) for v in (w, wl, -wl, wl, -wl)]
    fq_w = ops.fake_quantize(*wc, 255)
    conv = ops.convolution(fq_x, fq_w, [1, 1], [1, 1], [1, 1], [1, 1])
    xml = ov_save(tmp_path / "m.xml", conv, [x])
    feeds = [rng.uniform(-0.5, 3.0, (1, 3, 8, 8)).astype(F32)]
    got, = run_onnx(xml, feeds)
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got, list(evaluate(load_ir(xml), {"x": feeds[0]}).values())[0], rtol=1e-4, atol=1e-4)


def _hand_ir(path, levels=256, range_shape=(1, 3, 1, 1)):
    w = IRWriter("fq")
    x = w.parameter((1, 3, 2, 2), name="x")
    r = [w.const(np.full(range_shape, v, F32)) for v in (-1, 1, -1, 1)]
    y, = w.layer("FakeQuantize", "opset1", [x, *r], {"levels": levels, "auto_broadcast": "numpy"},
                 [("f32", (1, 3, 2, 2))], name="fq_layer", out_names=["y"])
    w.result(y)
    return w.save(path)


@pytest.mark.parametrize("kw, message", [({"levels": 1}, "levels=1"), ({"range_shape": (1, 2, 1, 1)}, "does not broadcast")])
def test_invalid_layers_are_reported(tmp_path, capsys, kw, message):
    xml = _hand_ir(tmp_path / "m.xml", **kw)
    with pytest.raises(InvalidLayer, match=message) as e:
        convert(xml)
    assert "fq_layer" in str(e.value)
    with pytest.raises(InvalidLayer):
        evaluate(load_ir(xml), {"x": np.zeros((1, 3, 2, 2), F32)})
    assert main(["convert", str(xml), "-o", str(tmp_path / "m.onnx")]) == 2
    assert "fq_layer" in capsys.readouterr().err


@pytest.mark.parametrize("version", [10, 11])
def test_f32_ranges_on_f16_data(tmp_path, version):
    """FP16-INT8 IRs (v10 from the Model Optimizer, v11 from NNCF) put FakeQuantize with f32
    ranges on f16 activations; OpenVINO accepts the mix and computes in f32. ir2onnx must convert
    it (not refuse it) and give OpenVINO's f16 output bit for bit."""
    w = IRWriter(version=version)
    x = w.parameter([1, 3, 8, 8], "f16", name="x")
    ranges = [w.const(np.array(v, np.float32).reshape(1, 3, 1, 1), "f32")
              for v in ([-1.2345678, -0.5, 0.0], [2.7182818, 0.5, 3.3333333],
                        [-1.2345678, -0.5, 0.0], [2.7182818, 0.5, 3.3333333])]
    y, = w.layer("FakeQuantize", "opset1", [x, *ranges], {"levels": 256, "auto_broadcast": "numpy"},
                 [("f16", [1, 3, 8, 8])], out_names=["y"])
    w.result(y)
    xml = w.save(tmp_path / "m.xml")
    xv = (np.random.default_rng(1).standard_normal((1, 3, 8, 8)) * 2).astype(np.float16)
    feed = xv.astype(np.float32) if version == 10 else xv  # v10: f32 inputs and outputs, as OpenVINO
    got = run_onnx(xml, [feed])[0]
    assert got.dtype == feed.dtype
    np.testing.assert_array_equal(got, run_openvino(xml, [feed])[0].astype(got.dtype))
