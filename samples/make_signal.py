"""Regenerate samples/signal/: torch.fft models converted by OpenVINO's PyTorch frontend and saved
as IR (``openvino.convert_model`` + ``openvino.save_model`` defaults: dynamic dims), with torch
eager's outputs: the truth that tests/test_signal.py compares ir2onnx with (DFT-7, IDFT-7, RDFT-9,
IRDFT-9 and STFT-15 as the frontend writes them, signal sizes that pad and trim included).

For each model NAME: ``NAME.xml`` + ``.bin`` (input ``in0``, output ``out0``), ``NAME_in0.npy``
and ``NAME_out0.npy`` (torch eager). Complex tensors cross the model boundary as OpenVINO's
layout (last dim 2: ``torch.view_as_real``). torch is not a test dependency; run

    python samples/make_signal.py
"""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "signal"


def models():
    import torch

    def real_in(fn):
        class M(torch.nn.Module):
            def forward(self, x):
                return torch.view_as_real(fn(x))
        return M()

    def complex_in(fn, real_out=False):
        class M(torch.nn.Module):
            def forward(self, x):
                y = fn(torch.view_as_complex(x))
                return y if real_out else torch.view_as_real(y)
        return M()

    rng = np.random.default_rng(7)
    r = rng.standard_normal((2, 3, 6)).astype(np.float32)
    c = rng.standard_normal((2, 3, 6, 2)).astype(np.float32)
    fft = torch.fft
    yield "fft", real_in(lambda x: fft.fft(x.to(torch.complex64), dim=-1)), r
    yield "fft2_pad_trim", complex_in(lambda x: fft.fftn(x, s=(4, 9), dim=(1, 2))), c
    yield "ifft", complex_in(lambda x: fft.ifft(x, dim=1)), c
    yield "ifft_ortho", complex_in(lambda x: fft.ifft(x, n=8, dim=-1, norm="ortho")), c
    yield "rfft", real_in(lambda x: fft.rfft(x, dim=-1)), r
    yield "rfft2_trim", real_in(lambda x: fft.rfftn(x, s=(2, 5), dim=(0, 2))), r
    yield "irfft", complex_in(lambda x: fft.irfft(x, dim=-1), real_out=True), c
    yield "irfft_n7", complex_in(lambda x: fft.irfft(x, n=7, dim=-1), real_out=True), c
    yield "irfft2", complex_in(lambda x: fft.irfftn(x, dim=(1, 2)), real_out=True), c
    audio = rng.standard_normal((2, 40)).astype(np.float32)
    hann = torch.hann_window(6)
    yield "stft", real_in(lambda x: torch.stft(x, n_fft=8, hop_length=3, win_length=6, window=hann, center=False,
                                               return_complex=True)), audio


def main() -> None:
    import openvino as ov
    import torch

    shutil.rmtree(HERE, ignore_errors=True)
    HERE.mkdir(parents=True)
    for name, module, x in models():
        t = torch.from_numpy(x)
        model = ov.convert_model(module, example_input=(t,))
        model.inputs[0].get_tensor().set_names({"in0"})
        model.outputs[0].get_tensor().set_names({"out0"})
        ov.save_model(model, str(HERE / f"{name}.xml"))
        np.save(HERE / f"{name}_in0.npy", x)
        np.save(HERE / f"{name}_out0.npy", module(t).numpy())
    print(f"wrote {HERE}")


if __name__ == "__main__":
    main()
