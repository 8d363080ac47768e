"""``--precision f16`` against ``--precision f32`` on onnxruntime's CPU provider: latency ratio.

    python benchmarks/bench_precision.py [--threads N] [--rounds R] [--budget S]

Models: the samples under samples/real (cnn, detector, transformer, bert, t5_encoder, nncf_resnet3:
small FP32 IRs with f16-compressed weights, as save_model writes them) and an FP16 IR v10 written
as Model Optimizer writes it (a conv net: 6 3x3 convolutions of 32 channels on 1x3x64x64, f16 on
every port).

Measured (onnxruntime 1.32, 2 shared CPUs, 1 thread): f16/f32 from 0.99 (nncf_resnet3, the conv
net) to 1.30 (detector): f16 buys nothing on the CPU, whose provider computes most f16 layers in
f32 between Casts it inserts itself (the conv net's f16 output equals the f32 one). f16 is for
CUDA and TensorRT. Each model runs in
a process of its own (``--one NAME``), so that one model's allocations and threads do not slow the
next. onnxruntime's thread spinning is off (``session.intra_op.allow_spinning=0``) and the f32 and
f16 sessions run alternately in blocks (benchmarks/timing.py); the ratio is the median of the
per-round ratios of block medians. The last column is the largest difference of the f16 model's
first output from the f32 model's, relative to its largest magnitude.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from timing import measure  # noqa: E402  (benchmarks/ is the script's folder)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SAMPLES = {name: ROOT / "samples" / "real" / name / "model.xml"
           for name in ("cnn", "detector", "transformer", "bert", "t5_encoder", "nncf_resnet3")}
MODELS = [*SAMPLES, "mo_fp16_convnet"]


def mo_fp16_convnet(path: Path, channels: int = 32, layers: int = 6, size: int = 64) -> Path:
    """An FP16 IR v10 as Model Optimizer writes it: f16 on every port, f16 weights into the convs."""
    from ir2onnx.testing import IRWriter

    rng = np.random.default_rng(0)
    w = IRWriter("mo_fp16_convnet", version=10)
    y, c = w.parameter((1, 3, size, size), "f16", "x"), 3
    conv = {"strides": [1, 1], "pads_begin": [1, 1], "pads_end": [1, 1], "dilations": [1, 1],
            "auto_pad": "explicit"}
    for i in range(layers):
        shape = (1, channels, size, size)
        weights = (rng.standard_normal((channels, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float16)
        y = w.layer("Convolution", "opset1", [y, w.const(weights)], conv, [("f16", shape)])[0]
        bias = (rng.standard_normal((1, channels, 1, 1)) * 0.1).astype(np.float16)
        y = w.layer("Add", "opset1", [y, w.const(bias)], None, [("f16", shape)])[0]
        y = w.layer("ReLU", "opset1", [y], None, [("f16", shape)], out_names=["y"] if i == layers - 1 else None)[0]
        c = channels
    w.result(y)
    return w.save(path)


def session(model, threads: int):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = threads
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def one(name: str, threads: int, rounds: int, budget: float) -> None:
    from ir2onnx.runtime import sessions as runtime
    from ir2onnx.api import convert

    with tempfile.TemporaryDirectory() as tmp:
        xml = SAMPLES[name] if name in SAMPLES else mo_fp16_convnet(Path(tmp) / "net.xml")
        sessions = {mode: session(convert(xml, precision=mode), threads) for mode in ("f32", "f16")}
    feeds = runtime.make_inputs(sessions["f32"], {}, {}, seed=0)
    outs = {m: s.run(None, feeds)[0] for m, s in sessions.items()}
    t, n = measure({m: (lambda s: lambda: s.run(None, feeds))(s) for m, s in sessions.items()},
                   rounds, budget, baseline="f32")
    ref = outs["f32"].astype(np.float64)
    diff = float(np.abs(outs["f16"].astype(np.float64) - ref).max() / max(np.abs(ref).max(), 1e-30))
    print(f"{name:16} {t['f32'][0] * 1e3:9.3f} {t['f16'][0] * 1e3:9.3f} {t['f16'][1]:8.2f} {n:7d} {diff:10.2e}",
          flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads (default 1)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--budget", type=float, default=10.0, help="seconds of timing per model at most")
    ap.add_argument("--one", choices=MODELS, help=argparse.SUPPRESS)  # the child process
    args = ap.parse_args(argv)
    if args.one:
        one(args.one, args.threads, args.rounds, args.budget)
        return 0
    import onnxruntime

    print(f"onnxruntime {onnxruntime.__version__}, {os.cpu_count()} CPUs, threads={args.threads}, "
          f"spinning off, medians of up to {args.rounds} rounds")
    print(f"{'model':16} {'f32 ms':>9} {'f16 ms':>9} {'f16/f32':>8} {'rounds':>7} {'f16 diff':>10}")
    for name in MODELS:
        subprocess.run([sys.executable, __file__, "--one", name, "--threads", str(args.threads),
                        "--rounds", str(args.rounds), "--budget", str(args.budget)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
