"""Selftest cases of DFT-7, IDFT-7, RDFT-9, IRDFT-9 and STFT-15 (arithmetic: within the per-type
tolerances), with numpy.fft's values where the spec's worked examples would be. Signal sizes that
pad the input of RDFT/IRDFT are left to tests/test_signal.py (OpenVINO's CPU plugin deviates)."""
from __future__ import annotations

import importlib

import numpy as np

from .cases import Case, const, ov_build, param


def _fft(version, fn, shape, axes, sizes=None):
    def make(ops):
        mod = importlib.import_module(f"openvino.{version}")
        x = param(ops, shape)
        extra = [const(ops, sizes)] if sizes is not None else []
        return [(getattr(mod, fn)(x, const(ops, axes), *extra), "y")], [x]
    return make


def _as_complex(x):
    return x[..., 0].astype(np.float64) + 1j * x[..., 1]


def _pack(c):
    return np.stack([c.real, c.imag], -1).astype(np.float32)


def _normal(shape):
    return lambda rng: {"x": rng.standard_normal(shape).astype(np.float32)}


def _stft(transpose):
    def make(ops):
        x = param(ops, [None, None])
        window = const(ops, np.hanning(6), np.float32)
        return [(ops.stft(x, window, const(ops, 8), const(ops, 3), transpose), "y")], [x]
    return make


def _stft_numpy(x, transpose):
    pad = np.zeros(8)
    pad[1:7] = np.hanning(6).astype(np.float32)
    frames = np.stack([x[:, t * 3:t * 3 + 8] * pad for t in range((x.shape[1] - 8) // 3 + 1)], 1)
    y = np.fft.rfft(frames, axis=-1)
    return _pack(y.transpose(0, 2, 1) if transpose else y)


CASES = [
    Case("dft/axes-1-2", ("DFT", "opset7"), ov_build(_fft("opset7", "dft", [None, None, None, 2], [1, 2])),
         exact=False, min_opset=17, inputs=_normal((2, 3, 5, 2)),
         expect={"y": lambda f: _pack(np.fft.fftn(_as_complex(f["x"]), axes=[1, 2]))}),
    Case("dft/signal-size-pad-trim", ("DFT", "opset7"),
         ov_build(_fft("opset7", "dft", [None, None, 2], [0, 1], [4, 3])),
         exact=False, min_opset=17, inputs=_normal((2, 5, 2)),
         expect={"y": lambda f: _pack(np.fft.fftn(_as_complex(f["x"]), s=[4, 3], axes=[0, 1]))}),
    Case("idft/axis-minus-1", ("IDFT", "opset7"), ov_build(_fft("opset7", "idft", [None, None, 2], [-1])),
         exact=False, min_opset=17, inputs=_normal((3, 6, 2)),
         expect={"y": lambda f: _pack(np.fft.ifft(_as_complex(f["x"]), axis=-1))}),
    Case("rdft/axes-0-1", ("RDFT", "opset9"), ov_build(_fft("opset9", "rdft", [None, None], [0, 1])),
         exact=False, min_opset=17, inputs=_normal((4, 6)),
         expect={"y": lambda f: _pack(np.fft.rfftn(f["x"], axes=[0, 1]))}),
    Case("irdft/default-size", ("IRDFT", "opset9"), ov_build(_fft("opset9", "irdft", [None, None, 2], [1])),
         exact=False, min_opset=17, inputs=_normal((3, 5, 2)),
         expect={"y": lambda f: np.fft.irfft(_as_complex(f["x"]), axis=1).astype(np.float32)}),
    Case("irdft/sizes-trim", ("IRDFT", "opset9"),
         ov_build(_fft("opset9", "irdft", [None, None, 2], [0, 1], [2, 5])),
         exact=False, min_opset=17, inputs=_normal((3, 5, 2)),
         expect={"y": lambda f: np.fft.irfftn(_as_complex(f["x"]), s=[2, 5], axes=[0, 1]).astype(np.float32)}),
    Case("stft/hann-6-in-8", ("STFT", "opset15"), ov_build(_stft(False)), exact=False, min_opset=17,
         inputs=_normal((2, 20)), expect={"y": lambda f: _stft_numpy(f["x"], False)}),
    Case("stft/transpose-frames", ("STFT", "opset15"), ov_build(_stft(True)), exact=False, min_opset=17,
         inputs=_normal((2, 20)), expect={"y": lambda f: _stft_numpy(f["x"], True)}),
]
