"""Time ``ir2onnx check`` on a BERT-base-shaped IR (12 layers, d=768, 12 heads, FFN 3072, a
30522-token vocabulary: ~110M parameters) that OpenVINO writes itself.

The IR is built with OpenVINO's opset API, layer for layer as its PyTorch frontend writes a
``transformers`` BertModel (Gather embeddings, MatMul(transpose_b) + Add, ScaledDotProductAttention
with an additive mask, MVN + Multiply + Add layer norms, Gelu(erf), a Tanh pooler), random weights
(seeded), saved by ``openvino.save_model`` with its defaults (f16-compressed weights: Const(f16) ->
Convert(f32), dynamic batch and sequence). It is written to a scratch folder, never committed.

Each check runs in a fresh process as a user types it; the script prints its wall time, the CPU
time of the check and its child processes (the figure to compare on a shared machine: a check
whose threads wait for cores takes longer on the wall clock, not in CPU), and the check's output
(progress lines included). ``--seq`` feeds token ids in range and a mask of ones of that length (files
given with ``--input``); without it the check generates its own inputs.

    python benchmarks/check_large.py [--seq 128] [--layers 12] [--keep DIR] [-- extra check args]

Measured (2026-11-27, the 2-core machine shared with other jobs; load average ~18):
see docs/check.md.
"""
from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

VOCAB, POSITIONS, HIDDEN, HEADS, FFN = 30522, 512, 768, 12, 3072


def build_bert(folder: Path, layers: int = 12, hidden: int = HIDDEN, heads: int = HEADS,
               ffn: int = FFN, vocab: int = VOCAB, seed: int = 0) -> tuple[Path, int]:
    """Write ``folder/model.xml`` + ``.bin``; returns the path and the parameter count."""
    import openvino as ov
    import openvino.opset13 as op

    rng = np.random.default_rng(seed)
    count = 0

    def w(*shape, std=0.02):
        nonlocal count
        count += int(np.prod(shape))
        return op.constant(rng.normal(0.0, std, shape).astype(np.float32))

    def c(value, dtype=np.int64):
        return op.constant(np.array(value, dtype))

    def linear(x, n_in, n_out):
        return op.add(op.matmul(x, w(n_out, n_in), False, True), w(n_out))

    def layer_norm(x):
        n = op.mvn(x, c([-1]), True, 1e-12, "inside_sqrt")
        return op.add(op.multiply(n, op.constant(np.ones(hidden, np.float32))), w(hidden))

    ids = op.parameter([-1, -1], np.int64, name="input_ids")
    mask = op.parameter([-1, -1], np.int64, name="attention_mask")
    ids.output(0).set_names({"input_ids"})
    mask.output(0).set_names({"attention_mask"})
    seq = op.gather(op.shape_of(ids), c([1]), c(0))
    positions = op.unsqueeze(op.range(c(0), op.squeeze(seq, c([0])), c(1), "i64"), c([0]))
    x = op.add(op.gather(w(vocab, hidden), ids, c(0)), op.gather(w(POSITIONS, hidden), positions, c(0)))
    x = layer_norm(op.add(x, op.gather(w(2, hidden), c([[0]]), c(0))))
    # the additive mask: (1 - mask) * finfo(f32).min, [B, 1, 1, S]
    m = op.convert(op.unsqueeze(mask, c([1, 2])), np.float32)
    bias = op.multiply(op.subtract(op.constant(np.float32(1.0)), m),
                       op.constant(np.float32(np.finfo(np.float32).min)))
    head = hidden // heads
    split = c([0, 0, heads, head])
    for _ in range(layers):
        q, k, v = (op.transpose(op.reshape(linear(x, hidden, hidden), split, True), c([0, 2, 1, 3]))
                   for _ in range(3))
        a = op.scaled_dot_product_attention(q, k, v, bias, causal=False)
        a = op.reshape(op.transpose(a, c([0, 2, 1, 3])), c([0, 0, hidden]), True)
        x = layer_norm(op.add(linear(a, hidden, hidden), x))
        f = linear(op.gelu(linear(x, hidden, ffn), "erf"), ffn, hidden)
        x = layer_norm(op.add(f, x))
    pooled = op.tanh(linear(op.gather(x, c(0), c(1)), hidden, hidden))
    x.output(0).set_names({"last_hidden_state"})
    pooled.output(0).set_names({"pooler_output"})
    model = ov.Model([op.result(x), op.result(pooled)], [ids, mask], "bert_base")
    xml = folder / "model.xml"
    ov.save_model(model, xml)  # defaults: f16-compressed weights
    return xml, count


def run_check(xml: Path, extra: list[str], timeout: float) -> tuple[float, float, int | str, str]:
    """(wall seconds, CPU seconds of the check and its children, exit code, stderr + stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-m", "ir2onnx", "check", str(xml), *extra],
                           capture_output=True, text=True, timeout=timeout)
        rc, out = p.returncode, p.stderr + p.stdout
    except subprocess.TimeoutExpired as e:
        rc, out = "timeout", (e.stderr or b"").decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, rc, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--seq", type=int, default=0, help="sequence length to feed (default: generated inputs)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--keep", help="write the IR into this folder and keep it (reused when there)")
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--repeat", type=int, default=1, help="checks to time (default 1)")
    ap.add_argument("extra", nargs="*", help="extra arguments for check (after --)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ir2onnx-check-large-") as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        if args.keep and (folder / "model.xml").is_file():  # built before by this script
            xml = folder / "model.xml"
            print(f"IR: {xml} (kept from an earlier run)", flush=True)
        else:
            xml, params = build_bert(folder, args.layers)
            print(f"IR: {params / 1e6:.1f}M parameters, {xml.with_suffix('.bin').stat().st_size / 2**20:.0f} MiB "
                  f"(built in {time.perf_counter() - start:.0f} s)", flush=True)
        extra = list(args.extra)
        if args.seq:
            rng = np.random.default_rng(0)
            np.save(folder / "ids.npy", rng.integers(0, VOCAB, (args.batch, args.seq)).astype(np.int64))
            np.save(folder / "mask.npy", np.ones((args.batch, args.seq), np.int64))
            extra += ["--input", f"input_ids={folder / 'ids.npy'}", "--input", f"attention_mask={folder / 'mask.npy'}"]
        for _ in range(args.repeat):
            seconds, cpu, rc, out = run_check(xml, extra, args.timeout)
            print(f"check {' '.join(args.extra)} (seq {args.seq or 'generated'}): exit {rc}, {seconds:.1f} s "
                  f"wall, {cpu:.1f} s CPU (all threads and child processes)", flush=True)
            print("\n".join("    " + l for l in out.strip().splitlines()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
