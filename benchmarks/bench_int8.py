"""INT8 IRs on onnxruntime: the QDQ model (--quantized qdq) vs the exact float emulation vs
OpenVINO running the IR; and the file size of a u4 weight-compressed model kept packed vs unpacked.

    python benchmarks/bench_int8.py [--threads N] [--rounds R] [--budget S]

Models: the NNCF-quantized ResNet-style sample (samples/real/nncf_resnet3: made by NNCF from a
torch model, 3 residual blocks, 32 channels, 1x3x32x32 input); and, NNCF style, built with
openvino.opset by ir2onnx/testing/quantized_models.py with f16-compressed weights: an INT8 ResNet-style
net (stem + 3 residual blocks, 32 channels, 1x3x64x64 input) and
an INT8 transformer block (128 tokens, width 256, 4 heads, 4x MLP); u4 group-wise MatMuls (one
token) kept packed (onnxruntime: MatMulNBits, accuracy level 0 = exact) vs unpacked. Timings:
medians of rounds of timed blocks, each runner in turn (benchmarks/timing.py), ratios to OpenVINO
per round. Threads: onnxruntime intra_op_num_threads and
OpenVINO INFERENCE_NUM_THREADS; OpenVINO runs its own INT8 pipeline with f32 for the rest (its
default on CPUs with bf16 would be bf16, onnxruntime computes f32).
The last two columns give the largest difference from OpenVINO's first output relative to its
largest magnitude (quantization levels that flip on near-ties cascade, see the README).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from timing import measure  # noqa: E402  (benchmarks/ is the script's folder)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ir2onnx.testing import quantized_models as qm  # noqa: E402
from ir2onnx.runtime import sessions as runtime  # noqa: E402
from ir2onnx.api import convert, convert_file  # noqa: E402


def ort_runner(model, x, threads):
    sess = runtime.session(model.SerializeToString(), "cpu", threads=threads)
    feeds = {sess.get_inputs()[0].name: x}
    return (lambda: sess.run(None, feeds)), sess.run(None, feeds)[0]


def ov_runner(xml, x, threads):
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_NUM_THREADS": threads,
                                                                    "INFERENCE_PRECISION_HINT": "f32"})
    req = compiled.create_infer_request()
    return (lambda: req.infer([x], share_inputs=True)), np.array(req.infer([x])[0])


def rel(a, b) -> float:
    return float(np.abs(a.astype(np.float64) - b).max() / np.abs(b).max())


def latency(tmp: Path, threads: int, rounds: int, budget: float) -> None:
    rng = np.random.default_rng(0)
    cases = [("NNCF ResNet", ROOT / "samples" / "real" / "nncf_resnet3" / "model.xml",
              rng.standard_normal((1, 3, 32, 32)).astype(np.float32)),
             ("ResNet-style", qm.resnet(tmp / "resnet.xml", blocks=3, channels=32, size=64),
              rng.standard_normal((1, 3, 64, 64)).astype(np.float32)),
             ("transformer", qm.transformer_block(tmp / "block.xml", tokens=128, dim=256),
              rng.standard_normal((1, 128, 256)).astype(np.float32))]
    print(f"{'model':13} {'qdq ms':>8} {'float ms':>9} {'ov ms':>7} {'qdq/ov':>7} {'float/ov':>9} "
          f"{'float/qdq':>10} {'qdq diff':>9} {'float diff':>10}")
    for name, xml, x in cases:
        run_q, y_q = ort_runner(convert(xml, quantized="qdq"), x, threads)
        run_f, y_f = ort_runner(convert(xml), x, threads)
        run_o, y_o = ov_runner(xml, x, threads)
        t, _ = measure({"q": run_q, "f": run_f, "openvino": run_o}, rounds, budget)
        (q, q_ov, _), (f, f_ov, _), (o, _, _) = t["q"], t["f"], t["openvino"]
        print(f"{name:13} {q * 1e3:8.3f} {f * 1e3:9.3f} {o * 1e3:7.3f} {q_ov:7.2f} "
              f"{f_ov:9.2f} {f / q:10.2f} {rel(y_q, y_o):9.2e} {rel(y_f, y_o):10.2e}")


def sizes(tmp: Path, threads: int = 1, rounds: int = 10, budget: float = 5.0) -> None:
    import openvino.opset15 as ops

    from ir2onnx.testing import ov_compressed_weight, ov_parameter, ov_save

    print(f"\n{'u4 MatMul weights':28} {'.bin KiB':>9} {'packed KiB':>11} {'unpacked KiB':>13} "
          f"{'packed/bin':>11} {'unpacked/bin':>13} {'packed ms':>10} {'unpacked ms':>12} {'ov ms':>7}")
    for n, k, group in ((1024, 1024, 128), (1024, 1024, 32), (2048, 512, 64)):
        x = ov_parameter([None, k])
        w = ov_compressed_weight((n, k), "u4", group, zero_point="int", scale_dtype=np.float16)
        xml = ov_save(tmp / f"u4_{n}_{group}.xml", ops.matmul(x, w, False, True), [x])
        bin_size = os.path.getsize(xml.with_suffix(".bin"))
        packed = convert_file(xml, tmp / "p.onnx", opset=21)
        unpacked = convert_file(xml, tmp / "u.onnx", opset=17, compressed_weights="unpack")
        feed = np.random.default_rng(0).standard_normal((1, k)).astype(np.float32)
        runs = {}
        for key, path in (("p", packed), ("u", unpacked)):
            sess = runtime.session(path, "cpu", threads=threads)  # MatMulNBits at accuracy level 0
            runs[key] = (lambda s: lambda: s.run(None, {"x": feed}))(sess)
        runs["openvino"] = ov_runner(xml, feed, threads)[0]
        t = {k: v[0] for k, v in measure(runs, rounds, budget)[0].items()}
        packed, unpacked = os.path.getsize(packed), os.path.getsize(unpacked)
        label = f"{n}x{k} group {group}"
        print(f"{label:28} {bin_size / 1024:9.0f} {packed / 1024:11.0f} {unpacked / 1024:13.0f} "
              f"{packed / bin_size:11.2f} {unpacked / bin_size:13.2f} {t['p'] * 1e3:10.3f} "
              f"{t['u'] * 1e3:12.3f} {t['openvino'] * 1e3:7.3f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1, help="threads for both runtimes (default 1)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--budget", type=float, default=5.0, help="seconds of timing per model at most")
    args = ap.parse_args(argv)
    import onnxruntime
    import openvino

    print(f"onnxruntime {onnxruntime.__version__}, openvino {openvino.__version__}, "
          f"{os.cpu_count()} CPUs, threads={args.threads}, medians of up to {args.rounds} rounds")
    with tempfile.TemporaryDirectory() as tmp:
        latency(Path(tmp), args.threads, args.rounds, args.budget)
        sizes(Path(tmp), args.threads, args.rounds, args.budget)
    return 0


if __name__ == "__main__":
    sys.exit(main())
