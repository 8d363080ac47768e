"""Write the NNCF weight-compression samples in samples/real/mlp_{nf4,mxfp4,fp4,nvfp4,mxfp8,cb4}/
(run by hand; needs torch, openvino and nncf, none of which CI installs).

    pip install nncf==3.4.0 && python samples/make_nncf_weights.py [MODE ...]

(MODE: some of the folder suffixes, to write only those; mlp_cb4 was written with torch 2.14.1,
openvino 2026.4.1 and nncf 3.4.0.)

A small PyTorch MLP (Linear 128 -> 256, GELU, Linear 256 -> 256, GELU, Linear 256 -> 64, with
biases), converted by OpenVINO's PyTorch frontend (``openvino.convert_model``, dynamic batch),
weight-compressed by ``nncf.compress_weights`` (data-free, ``group_size=32`` (NVFP4: 16),
``ratio=1``, ``all_layers=True``) in modes NF4 (``Const nf4 -> Convert f16 -> Multiply f16
scale``), MXFP4 (``Const f4e2m1 -> Convert f16 -> Multiply(Const f8e8m0 -> Convert f16)``), FP4
(f4e2m1 with f16 scales), NVFP4 (f4e2m1, scale ``Convert f16(Multiply(Const f8e4m3 -> Convert
f32, Const f32 global scale))``), MXFP8_E4M3 (f8e4m3 with f8e8m0 scales) and CB4 (``Const u4
indices -> Convert u8 -> Gather(Const f8e4m3 codebook [16] -> Convert f16, indices, 0) -> Multiply
f16 scale``: optimum-intel's ``--weight-format cb4``), each then
``-> Reshape -> Convert f32 -> MatMul(transpose_b)``, and saved with ``openvino.save_model``.
That is the IR optimum-intel / NNCF users get for these modes. Each folder is < 200 KB.
"""
from __future__ import annotations

import sys
from pathlib import Path

import nncf
import openvino as ov
import torch
from torch import nn

FOLDER = Path(__file__).resolve().parent / "real"
MODES = {"nf4": nncf.CompressWeightsMode.NF4, "mxfp4": nncf.CompressWeightsMode.MXFP4,
         "fp4": nncf.CompressWeightsMode.FP4, "nvfp4": nncf.CompressWeightsMode.NVFP4,
         "mxfp8": nncf.CompressWeightsMode.MXFP8_E4M3, "cb4": nncf.CompressWeightsMode.CB4}


def mlp() -> ov.Model:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 256), nn.GELU(), nn.Linear(256, 64)).eval()
    return ov.convert_model(net, example_input=torch.randn(1, 128), input=[(-1, 128)])


def main() -> None:
    for name, mode in MODES.items():
        if sys.argv[1:] and name not in sys.argv[1:]:
            continue
        folder = FOLDER / f"mlp_{name}"
        folder.mkdir(parents=True, exist_ok=True)
        model = nncf.compress_weights(mlp(), mode=mode, group_size=16 if name == "nvfp4" else 32, ratio=1.0, all_layers=True)
        model.inputs[0].get_tensor().set_names({"x"})
        ov.save_model(model, folder / "model.xml")
        print(folder, sum(f.stat().st_size for f in folder.iterdir()), "bytes")


if __name__ == "__main__":
    main()
