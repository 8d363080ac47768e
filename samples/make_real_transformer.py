"""Write the "real transformer" sample in samples/real/transformer/ (run by hand; needs torch and
openvino; CI reads the committed files only).

    python samples/make_real_transformer.py [output folder]

A tiny transformer encoder layer in PyTorch, converted by OpenVINO's PyTorch frontend
(``openvino.convert_model``) with a static input shape and saved as IR with f32 weights:
token embedding (Gather) + learned positions -> pre-LayerNorm (MVN-6) -> multi-head
self-attention through ``torch.nn.functional.scaled_dot_product_attention`` with a causal mask
(OpenVINO keeps it as ScaledDotProductAttention-13) -> residual Add -> LayerNorm -> GELU MLP ->
residual Add -> final LayerNorm -> the mean over the sequence (ReduceMean) and a tied-free head.

The folder holds model.xml, model.bin and input.npy (fixed token ids, int64, named ``x``).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import openvino as ov
import torch
from torch import nn

ROOT = Path(__file__).resolve().parent / "real" / "transformer"
VOCAB, DIM, HEADS, SEQ, CLASSES = 32, 16, 2, 6, 4


class TinyEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.randn(1, SEQ, DIM) * 0.1)
        self.ln1, self.ln2, self.ln_out = nn.LayerNorm(DIM), nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.mlp1, self.mlp2 = nn.Linear(DIM, 2 * DIM), nn.Linear(2 * DIM, DIM)
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, x):
        h = self.embed(x) + self.pos
        b, n, d = h.shape
        q, k, v = self.qkv(self.ln1(h)).reshape(b, n, 3, HEADS, d // HEADS).permute(2, 0, 3, 1, 4).unbind(0)
        att = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = h + self.proj(att.transpose(1, 2).reshape(b, n, d))
        h = h + self.mlp2(nn.functional.gelu(self.mlp1(self.ln2(h))))
        return self.head(self.ln_out(h).mean(dim=1))


def main(folder: Path = ROOT) -> None:
    torch.manual_seed(0)
    model = TinyEncoder().eval()
    with torch.no_grad():  # non-trivial LayerNorm affine parameters
        for ln in (model.ln1, model.ln2, model.ln_out):
            ln.weight.uniform_(0.5, 1.5)
            ln.bias.uniform_(-0.2, 0.2)
    tokens = torch.randint(0, VOCAB, (1, SEQ))
    folder.mkdir(parents=True, exist_ok=True)
    ov_model = ov.convert_model(model, example_input=tokens, input=[([1, SEQ], ov.Type.i64)])
    ov_model.inputs[0].get_tensor().set_names({"x"})
    ov.save_model(ov_model, str(folder / "model.xml"), compress_to_fp16=False)
    np.save(folder / "input.npy", tokens.numpy())
    size = sum(p.stat().st_size for p in folder.iterdir())
    types = sorted({f"{op.get_type_name()}-{op.get_type_info().version_id}" for op in ov_model.get_ordered_ops()})
    with torch.no_grad():
        ref = model(tokens).numpy()
    got = ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([tokens.numpy()])[0]
    print(f"{folder}: {size} bytes; max |torch - openvino| = {np.abs(ref - got).max():.2e}")
    print(", ".join(types))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT)
