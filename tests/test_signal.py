"""DFT-7, IDFT-7, RDFT-9, IRDFT-9 on OpenVINO-written IR (dynamic dims, constant and run-time
signal sizes, at ONNX opset 17 (DFT-17) and 20 (DFT-20)) against the float64 oracle, numpy.fft
and OpenVINO; torch.fft models converted by OpenVINO (samples/signal/) against torch's outputs;
ONNX DFT models read by OpenVINO against onnxruntime on the original model. Axes fed at run time
(DFT/IDFT/RDFT) need opset 20.

Tolerance (arithmetic, not data movement): |got - want| <= 1e-5 * sum(|x|) for f32 (measured:
below 4e-7), 1e-3 * sum(|x|) for f16 data.

OpenVINO's CPU plugin deviates where a signal size pads the input of RDFT/IRDFT (RDFT: refused,
'Signal size greater than input size is not supported yet'; IRDFT: wrong values) and where an
IRDFT/RDFT signal_size holds -1 (it crashes); there the oracle, numpy and torch agree with us and
OpenVINO is not compared (README, deviations)."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import openvino as ov
import openvino.opset7 as o7
import openvino.opset9 as o9
import openvino.opset15 as ops
import pytest
from onnx import TensorProto, helper

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, ov_parameter, ov_save, run_onnx, run_openvino

SAMPLES = __import__("pathlib").Path(__file__).resolve().parent.parent / "samples" / "signal"
TOL = {np.float32: 1e-5, np.float16: 1e-3}
FN = {"dft": o7.dft, "idft": o7.idft, "rdft": o9.rdft, "irdft": o9.irdft}


def _close(got, want, x, dtype=np.float32, what=""):
    assert got.shape == want.shape and got.dtype == want.dtype, f"{what}: {got.shape} {got.dtype} vs {want.shape}"
    bound = TOL[dtype] * float(np.abs(np.asarray(x, np.float64)).sum())
    err = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max(initial=0))
    assert err <= bound, f"{what}: max error {err} > {bound}"


def _ir(tmp_path, op, shape, axes, sizes=None, dtype=np.float32, runtime_sizes=False):
    x = ov_parameter(shape, dtype, "x")
    params, extra = [x], []
    if sizes is not None:
        if runtime_sizes:
            s = ov_parameter([len(sizes)], np.int64, "s")
            params.append(s)
            extra = [s]
        else:
            extra = [ops.constant(np.array(sizes, np.int64))]
    y = FN[op](x, ops.constant(np.array(axes, np.int64)), *extra)
    return ov_save(tmp_path / f"{op}.xml", y, params)


def _numpy(op, x, axes, sizes):
    """numpy.fft's n-D transforms with OpenVINO's axes and signal sizes (-1: the default)."""
    c = x[..., 0] + 1j * x[..., 1] if op != "rdft" else x
    rank = c.ndim
    axes = [a % rank for a in axes]
    if sizes is None or -1 in sizes:
        s = None if sizes is None else [c.shape[a] if v == -1 else v for a, v in zip(axes, sizes)]
        if op == "irdft" and sizes is not None and sizes[-1] == -1:
            s[-1] = 2 * (c.shape[axes[-1]] - 1)
    else:
        s = list(sizes)
    fn = {"dft": np.fft.fftn, "idft": np.fft.ifftn, "rdft": np.fft.rfftn, "irdft": np.fft.irfftn}[op]
    y = fn(c, s=s, axes=axes)
    return y if op == "irdft" else np.stack([y.real, y.imag], -1)


def _run(tmp_path, op, in_shape, axes, sizes=None, dyn=True, openvino=True, runtime_sizes=False,
         opset=17, dtype=np.float32, seed=0):
    x = np.random.default_rng(seed).standard_normal(in_shape).astype(dtype)
    shape = [None] * (len(in_shape) - 1) + [in_shape[-1]] if dyn else list(in_shape)
    if op == "rdft" and dyn:
        shape = [None] * len(in_shape)
    xml = _ir(tmp_path, op, shape, axes, sizes, dtype, runtime_sizes)
    feeds = {"x": x}
    if runtime_sizes:
        feeds["s"] = np.array(sizes, np.int64)
    got = run_onnx(xml, feeds, opset=opset)[0]
    assert got.dtype == dtype
    _close(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), x, dtype, "oracle")
    _close(got, _numpy(op, x.astype(np.float64), axes, sizes).astype(dtype), x, dtype, "numpy")
    if openvino:
        _close(got, run_openvino(xml, feeds)[0], x, dtype, "openvino")
    return got


COMPLEX = [([1], None), ([0, 2], [4, 7]), ([-1, 0], [-1, 3]), ([2, 1, 0], [5, 2, 3])]


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("axes, sizes", COMPLEX)
@pytest.mark.parametrize("op", ["dft", "idft"])
def test_dft_idft(tmp_path, op, axes, sizes, opset):
    got = _run(tmp_path, op, (2, 3, 5, 2), axes, sizes, opset=opset)
    want_shape = [2, 3, 5, 2]
    for a, s in zip(axes, sizes or []):
        want_shape[a % 3] = want_shape[a % 3] if s == -1 else s
    assert list(got.shape) == want_shape


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("op", ["dft", "idft"])
def test_runtime_signal_size(tmp_path, op, opset):
    _run(tmp_path, op, (2, 3, 5, 2), [2, 0], [8, -1], runtime_sizes=True, opset=opset)


def test_idft_divides_by_the_product_of_signal_sizes(tmp_path):
    """A constant spectrum 1 at bin 0: IDFT over sizes 4 x 6 gives 1/24 everywhere."""
    x = np.zeros((4, 6, 2), np.float32)
    x[0, 0, 0] = 1
    xml = _ir(tmp_path, "idft", [None, None, 2], [0, 1])
    got = run_onnx(xml, {"x": x})[0]
    np.testing.assert_allclose(got[..., 0], np.full((4, 6), 1 / 24, np.float32), rtol=1e-6)
    np.testing.assert_allclose(run_openvino(xml, {"x": x})[0], got, atol=1e-7)


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("axes, sizes", [([2], None), ([2, 0], None), ([0, 2], [2, 5]), ([1], [2])])
def test_rdft(tmp_path, axes, sizes, opset):
    got = _run(tmp_path, "rdft", (2, 3, 6), axes, sizes, opset=opset)
    n = sizes[-1] if sizes else (2, 3, 6)[axes[-1]]
    assert got.shape[-1] == 2 and got.shape[axes[-1]] == n // 2 + 1


@pytest.mark.parametrize("axes, sizes", [([0, 2], [3, 9]), ([2], [-1])])
def test_rdft_padding_and_minus_one(tmp_path, axes, sizes):
    """Padding signal sizes and -1: OpenVINO's CPU plugin refuses or crashes; numpy decides."""
    got = _run(tmp_path, "rdft", (2, 3, 6), axes, sizes, openvino=False)
    assert got.shape[axes[-1]] == (sizes[-1] if sizes[-1] != -1 else 6) // 2 + 1


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("axes, sizes, dyn", [([1], None, True), ([1], None, False), ([1], [7], True),
                                              ([1, 0], None, True), ([0, 1], [2, 4], True)])
def test_irdft(tmp_path, axes, sizes, dyn, opset):
    got = _run(tmp_path, "irdft", (3, 6, 2), axes, sizes, dyn=dyn, opset=opset)
    assert got.ndim == 2


@pytest.mark.parametrize("axes, sizes, runtime", [([1], [12], False), ([0, 1], [5, 9], False), ([1], [-1], False),
                                                  ([0, 1], [2, -1], True), ([0, 1], [4, 13], True)])
def test_irdft_padding_and_minus_one(tmp_path, axes, sizes, runtime):
    """Bins zero-padded to N//2+1, -1 (2*(n-1) on the last axis), at run time too: OpenVINO's CPU
    plugin gives wrong values or crashes here; the oracle and numpy.fft.irfftn agree with us."""
    got = _run(tmp_path, "irdft", (3, 6, 2), axes, sizes, openvino=False, runtime_sizes=runtime)
    assert got.shape[axes[-1]] == (10 if sizes[-1] == -1 else sizes[-1])


@pytest.mark.parametrize("op, shape, axes", [("dft", (2, 5, 2), [1]), ("idft", (2, 5, 2), [0, 1]),
                                             ("rdft", (3, 6), [1]), ("irdft", (3, 6, 2), [1])])
def test_f16(tmp_path, op, shape, axes):
    _run(tmp_path, op, shape, axes, dtype=np.float16)


@pytest.mark.parametrize("name", ["fft", "fft2_pad_trim", "ifft", "ifft_ortho", "rfft", "rfft2_trim",
                                  "irfft", "irfft_n7", "irfft2"])
def test_torch_round_trip(name):
    """torch.fft through openvino.convert_model: onnxruntime on our ONNX matches torch eager."""
    xml = SAMPLES / f"{name}.xml"
    x = np.load(SAMPLES / f"{name}_in0.npy")
    want = np.load(SAMPLES / f"{name}_out0.npy")
    text = xml.read_text()
    assert any(f'type="{t}"' in text for t in ("DFT", "IDFT", "RDFT", "IRDFT"))
    _close(run_onnx(xml, {"in0": x})[0], want, x, what="torch")


def _onnx_dft(x_shape, inverse, onesided, length, axis):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    inits = [helper.make_tensor("n", TensorProto.INT64, [], [length])] if length else []
    node = helper.make_node("DFT", ["x", "n" if length else ""], ["y"], axis=axis, inverse=inverse, onesided=onesided)
    graph = helper.make_graph([node], "g", [x], [y], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("inverse, onesided, length, axis, last", [(0, 0, None, 1, 2), (1, 0, 7, 1, 2),
                                                                   (0, 1, None, 2, 1), (0, 0, 4, 2, 2),
                                                                   (1, 0, None, 2, 2), (0, 0, 3, 1, 1)])
def test_onnx_dft_read_by_openvino(tmp_path, inverse, onesided, length, axis, last):
    """An ONNX DFT-17 model, read by OpenVINO and saved as IR, converts back to onnxruntime's values.
    OpenVINO's ONNX frontend keeps the real input's trailing 1 for onesided=1 (RDFT over
    [..., 1] gives [..., 1, 2], ONNX [..., 2]: measured with OpenVINO 2026.4), so there the values are
    compared in ONNX's shape; OpenVINO's own output has the same extra dim as ours."""
    model = _onnx_dft([2, 6, 5, last], inverse, onesided, length, axis)
    x = np.random.default_rng(3).standard_normal((2, 6, 5, last)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    path = tmp_path / "dft.onnx"
    path.write_bytes(model.SerializeToString())
    ir = ov.Core().read_model(str(path))
    xml = tmp_path / "dft.xml"
    ov.save_model(ir, str(xml))
    assert any(f'type="{t}"' in xml.read_text() for t in ("DFT", "IDFT", "RDFT"))
    got = run_onnx(xml, {"x": x})[0]
    if onesided:
        assert got.shape == want.shape[:-1] + (1, 2) == run_openvino(xml, {"x": x})[0].shape
        got = got.reshape(want.shape)
    _close(got, want, x, what="onnxruntime on the ONNX model")


@pytest.mark.parametrize("op, shape, axes, sizes", [("dft", (2, 3, 5, 2), [2, -3], [4, -1]),
                                                   ("idft", (2, 3, 5, 2), [-2], None),
                                                   ("rdft", (2, 3, 6), [0, 2], [2, 5])])
def test_runtime_axes(tmp_path, op, shape, axes, sizes):
    """Axes fed at run time: DFT-20 (opset 20) takes each axis as an input; the converter chooses 20,
    a forced opset 17 refuses."""
    rank = len(shape)
    x = ov_parameter([None] * (rank - 1) + [shape[-1]] if op != "rdft" else [None] * rank, np.float32, "x")
    a = ov_parameter([len(axes)], np.int32, "a")
    extra = [ops.constant(np.array(sizes, np.int64))] if sizes else []
    xml = ov_save(tmp_path / "a.xml", FN[op](x, a, *extra), [x, a])
    with pytest.raises(UnsupportedLayer, match="axes known only at run time.*opset >= 20"):
        convert(xml, opset=17)
    assert next(o.version for o in convert(xml).opset_import if o.domain in ("", "ai.onnx")) == 20  # chosen
    feeds = {"x": np.random.default_rng(5).standard_normal(shape).astype(np.float32), "a": np.array(axes, np.int32)}
    got = run_onnx(xml, feeds, opset=20)[0]
    _close(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), feeds["x"], what="oracle")
    _close(got, _numpy(op, feeds["x"].astype(np.float64), axes, sizes).astype(np.float32), feeds["x"], what="numpy")
    _close(got, run_openvino(xml, feeds)[0], feeds["x"], what="openvino")


def test_irdft_runtime_axes_refused(tmp_path):
    x = ov_parameter([None, 4, 2], np.float32, "x")
    a = ov_parameter([1], np.int64, "a")
    xml = ov_save(tmp_path / "a.xml", o9.irdft(x, a), [x, a])
    with pytest.raises(UnsupportedLayer, match="axes known only at run time.*Concat"):
        convert(xml, opset=20)


def test_opset_16_refused(tmp_path):
    xml = _ir(tmp_path, "dft", [None, 4, 2], [1])
    with pytest.raises(UnsupportedLayer, match="opset >= 17"):
        convert(xml, opset=16)


@pytest.mark.parametrize("axes, match", [([1, -1], "repeat"), ([2], "out of range")])
def test_invalid_axes(tmp_path, axes, match):
    w = IRWriter()
    x = w.parameter([3, 4, 2], "f32", "x")
    y = w.layer("DFT", "opset7", [x, w.const(np.array(axes, np.int64))], {}, [("f32", [3, 4, 2])], name="d")[0]
    w.result(y)
    with pytest.raises(InvalidLayer, match=f"d.*{match}"):
        convert(w.save(tmp_path / "bad.xml"))


def test_integer_data_refused(tmp_path):
    w = IRWriter()
    x = w.parameter([3, 4], "i32", "x")
    y = w.layer("RDFT", "opset9", [x, w.const(np.array([1], np.int64))], {}, [("f32", [3, 3, 2])], name="r")[0]
    w.result(y)
    with pytest.raises(UnsupportedLayer, match="r.*RDFT on i32"):
        convert(w.save(tmp_path / "bad.xml"))


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("op, shape, out_shape, sizes", [("DFT", (3, 5, 2), (3, 5, 2), None),
                                                        ("IDFT", (3, 6, 2), (3, 6, 2), None),
                                                        ("IDFT", (3, 6, 2), (3, 7, 2), [7]),
                                                        ("IRDFT", (3, 4, 2), (3, 6), None)])
def test_f64_in_f64(tmp_path, op, shape, out_shape, sizes, opset):
    """f64 IR (OpenVINO's own DFT takes f16/f32/bf16; IRWriter writes it) is transformed in f64,
    the inverse ones as conj(DFT(conj(x))) / n (onnxruntime's f64 inverse of length 6 errs by 3e-8)."""
    w = IRWriter()
    x = w.parameter(list(shape), "f64", "x")
    version = "opset9" if op == "IRDFT" else "opset7"
    extra = [w.const(np.array(sizes, np.int64))] if sizes else []
    y = w.layer(op, version, [x, w.const(np.array([1], np.int64))] + extra, {}, [("f64", list(out_shape))])[0]
    w.result(y)
    xml = w.save(tmp_path / "f64.xml")
    v = np.random.default_rng(0).standard_normal(shape)
    got = run_onnx(xml, {"x": v}, opset=opset)[0]
    assert got.dtype == np.float64 and got.shape == out_shape
    want = next(iter(evaluate(ir2onnx.load_ir(xml), {"x": v}).values()))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("inverse", [0, 1])
def test_f32_is_accurate_to_f32_rounding(tmp_path, inverse):
    """The ONNX backend node test ``test_dft`` (x = arange(100) as [1, 10, 10, 1], DFT on axis 1)
    read by OpenVINO: onnxruntime's f32 DFT of a length that is not a power of 2 was off by 3.4e-4
    (6e-7 of the largest bin), 1.6e-4 where the bin is 0; OpenVINO and the f64 transform rounded
    to f32 are within f32 rounding of numpy's f64 FFT. Each bin is within 2 ulp of the largest."""
    model = _onnx_dft([1, 10, 10, 2 if inverse else 1], inverse, 0, None, 1)
    x = np.arange(200 if inverse else 100, dtype=np.float32).reshape(1, 10, 10, -1)
    path = tmp_path / "dft.onnx"
    path.write_bytes(model.SerializeToString())
    xml = tmp_path / "dft.xml"
    ov.save_model(ov.Core().read_model(str(path)), str(xml))
    got = run_onnx(xml, {"x": x})[0]
    c = x[..., 0] + 1j * x[..., 1] if inverse else x[..., 0]
    want = (np.fft.ifft if inverse else np.fft.fft)(c.astype(np.complex128), axis=1)
    want = np.stack([want.real, want.imag], -1)
    bound = 2 * np.spacing(np.float32(np.abs(want).max()))
    assert np.abs(got - want).max() <= bound
    assert np.abs(run_openvino(xml, {"x": x})[0] - want).max() <= 64 * bound  # its kernel: f32 sums
