"""STFT-15 on OpenVINO-written IR: signal rows of rank 1 and 2 with dynamic dims, windows shorter
than frame_size (zero-padded, centred), both layouts, and window, frame_size and frame_step as
constants or run-time inputs; onnxruntime against the float64 oracle, numpy and OpenVINO within
1e-5 * sum(|x|) (f16: 1e-3), and torch.stft converted by OpenVINO (samples/signal/stft) against
torch's output."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, ov_parameter, ov_save, run_onnx, run_openvino

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "signal"
TOL = {np.float32: 1e-5, np.float16: 1e-3}


def _close(got, want, x, dtype=np.float32, what=""):
    assert got.shape == want.shape and got.dtype == want.dtype, f"{what}: {got.shape} vs {want.shape}"
    err = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max())
    assert err <= TOL[dtype] * float(np.abs(x.astype(np.float64)).sum()), f"{what}: max error {err}"


def _numpy(x, window, size, step, transpose):
    """Frames by slicing, the centred window, numpy.fft.rfft."""
    rows = x.reshape(-1, x.shape[-1]).astype(np.float64)
    pad = np.zeros(size)
    left = (size - len(window)) // 2
    pad[left:left + len(window)] = window
    count = (rows.shape[1] - size) // step + 1
    frames = np.stack([rows[:, t * step:t * step + size] * pad for t in range(count)], 1)
    y = np.fft.rfft(frames, axis=-1)
    y = y.transpose(0, 2, 1) if transpose else y
    y = y.reshape(y.shape[1:]) if x.ndim == 1 else y
    return np.stack([y.real, y.imag], -1)


def _ir(tmp_path, rank, window, size, step, transpose, runtime, dtype=np.float32):
    x = ov_parameter([None] * rank, dtype, "x")
    params = [x]
    if runtime:
        w, s, t = ov_parameter([None], dtype, "w"), ov_parameter([], np.int32, "s"), ov_parameter([], np.int64, "t")
        params += [w, s, t]
    else:
        w, s, t = ops.constant(window.astype(dtype)), ops.constant(np.int64(size)), ops.constant(np.int32(step))
    return ov_save(tmp_path / "stft.xml", ops.stft(x, w, s, t, transpose), params)


@pytest.mark.parametrize("runtime", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("rank", [1, 2])
@pytest.mark.parametrize("window_len, size, step", [(8, 8, 3), (5, 8, 2), (6, 9, 4), (3, 7, 7)])
def test_stft(tmp_path, rank, transpose, runtime, window_len, size, step):
    rng = np.random.default_rng(window_len + size)
    x = rng.standard_normal((2, 23)[-rank:] if rank == 1 else (2, 23)).astype(np.float32)
    window = rng.uniform(0, 1, window_len).astype(np.float32)
    xml = _ir(tmp_path, rank, window, size, step, transpose, runtime)
    feeds = {"x": x}
    if runtime:
        feeds.update(w=window, s=np.array(size, np.int32), t=np.array(step, np.int64))
    got = run_onnx(xml, feeds)[0]
    _close(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), x, what="oracle")
    _close(got, _numpy(x, window, size, step, transpose).astype(np.float32), x, what="numpy")
    _close(got, run_openvino(xml, feeds)[0], x, what="openvino")


def test_f16(tmp_path):
    x = np.random.default_rng(2).standard_normal((2, 20)).astype(np.float16)
    window = np.hanning(6).astype(np.float16)
    xml = _ir(tmp_path, 2, window, 8, 3, False, False, np.float16)
    got = run_onnx(xml, {"x": x})[0]
    assert got.dtype == np.float16
    _close(got, _numpy(x, window.astype(np.float64), 8, 3, False).astype(np.float16), x, np.float16, "numpy")
    _close(got, run_openvino(xml, {"x": x})[0], x, np.float16, "openvino")


def test_torch_stft_round_trip():
    """torch.stft (center=False, a 6-sample Hann window in 8-sample frames) through OpenVINO."""
    xml = SAMPLES / "stft.xml"
    assert 'type="STFT"' in xml.read_text()
    x = np.load(SAMPLES / "stft_in0.npy")
    _close(run_onnx(xml, {"in0": x})[0], np.load(SAMPLES / "stft_out0.npy"), x, what="torch")


def test_opset_16_refused(tmp_path):
    xml = _ir(tmp_path, 1, np.ones(4, np.float32), 4, 2, False, False)
    with pytest.raises(UnsupportedLayer, match="opset >= 17"):
        convert(xml, opset=16)


def test_window_longer_than_frame_invalid(tmp_path):
    w = IRWriter()
    x = w.parameter([2, 20], "f32", "x")
    y = w.layer("STFT", "opset15", [x, w.const(np.ones(9, np.float32)), w.const(np.array(8, np.int64)),
                                    w.const(np.array(2, np.int64))], {"transpose_frames": "false"},
                [("f32", [2, 7, 5, 2])], name="st")[0]
    w.result(y)
    with pytest.raises(InvalidLayer, match="st.*window \\(9\\) is longer than frame_size \\(8\\)"):
        convert(w.save(tmp_path / "bad.xml"))
