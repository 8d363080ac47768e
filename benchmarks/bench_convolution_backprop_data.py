"""onnxruntime time of converted ConvolutionBackpropData layers as a ratio to OpenVINO running the
same IR with the same thread count, for each formulation the converter can emit, and the one it
chooses per shape.

Layers: the spec's worked example 1 (samples/), a 2-D decoder layer (64->32 channels, 64x64,
kernel 4, stride 2, pads 1) and three 3-D layers (kernel 4 stride 2; kernel 3 stride 2 with
output_padding; the kernel 2 stride 2 up-convolution of 3-D U-Nets). IR written by OpenVINO with
its default f16 weight compression. Formulations: ConvTranspose; stride-phase Convs interleaved
by one GatherElements ("phase") or, for comparison, by the DepthToSpace chain ("phase-chain",
what a dynamic batch or an output past MAX_GATHER_ELEMENTS gets). Timing: rounds in which
OpenVINO and every formulation run a block of runs each (see ``measure``); the ratio printed is
the median over rounds of (onnxruntime / OpenVINO) block medians; "fastest runs" is min / min.
About 30 seconds.
``python benchmarks/bench_convolution_backprop_data.py [--threads 2] [--rounds 15] [--budget 20]``.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np

from timing import measure  # noqa: E402  (benchmarks/ is the script's folder)

ROOT = Path(__file__).resolve().parents[1]


def _samples():
    spec = importlib.util.spec_from_file_location("make_cbd", ROOT / "samples" / "make_convolution_backprop_data.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _layer_ir(path: Path, data, filters, strides, pads, output_padding) -> Path:
    import openvino as ov
    import openvino.opset15 as ops

    rng = np.random.default_rng(7)
    p = ops.parameter(data, np.float32, name="data")
    w = ops.constant(rng.standard_normal(filters).astype(np.float32) * 0.1)
    node = ops.convolution_backprop_data(p, w, strides, None, pads, pads, [1] * len(strides), "explicit", output_padding)
    ov.save_model(ov.Model([node], [p]), str(path))  # compress_to_fp16=True, OpenVINO's default
    return path


def cases(tmp: Path):
    samples = _samples()
    yield ("worked example 1: [1,20,224,224] k3 s2 p1", ROOT / "samples" / "convolution_backprop_data" / "example1.xml",
           samples.example_input("example1"))
    rng = np.random.default_rng(0)
    layers = [
        ("2-D decoder: [1,64,64,64] -> 32 ch, k4 s2 p1", (1, 64, 64, 64), (64, 32, 4, 4), [2, 2], [1, 1], [0, 0]),
        ("3-D: [1,16,16,32,32] -> 8 ch, k4 s2 p1", (1, 16, 16, 32, 32), (16, 8, 4, 4, 4), [2] * 3, [1] * 3, [0] * 3),
        ("3-D: [1,16,16,32,32] -> 8 ch, k3 s2 p1 op1", (1, 16, 16, 32, 32), (16, 8, 3, 3, 3), [2] * 3, [1] * 3, [1] * 3),
        ("3-D U-Net up-conv: [1,64,16,16,16] -> 32 ch, k2 s2", (1, 64, 16, 16, 16), (64, 32, 2, 2, 2), [2] * 3, [0] * 3,
         [0] * 3),
    ]
    for i, (title, data, filters, strides, pads, op) in enumerate(layers):
        xml = _layer_ir(tmp / f"layer{i}.xml", data, filters, strides, pads, op)
        yield title, xml, rng.standard_normal(data).astype(np.float32)


def _ov_runner(xml, x, threads):
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU",
                                  {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    return lambda: request.infer([x]), np.array(request.infer([x])[compiled.outputs[0]])


def _ort_runner(xml, x, threads, formulation, gather_cap=None):
    import onnxruntime as ort

    import ir2onnx.ops.convolution_backprop_data as cbd
    from ir2onnx.api import convert

    saved = cbd.FORMULATION, cbd.forms.MAX_GATHER_ELEMENTS
    cbd.FORMULATION = formulation
    if gather_cap is not None:
        cbd.forms.MAX_GATHER_ELEMENTS = gather_cap
    try:
        model = convert(xml)
    finally:
        cbd.FORMULATION, cbd.forms.MAX_GATHER_ELEMENTS = saved
    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    chain = ", ".join(_runtime_ops(model))
    return (lambda: sess.run(None, {name: x})), sess.run(None, {name: x})[0], chain


def _runtime_ops(model) -> list[str]:
    """Node types that run per inference (nodes fed only by initializers are folded at load)."""
    known, ops = {t.name for t in model.graph.initializer}, []
    for node in model.graph.node:
        if all(i in known for i in node.input if i):
            known.update(node.output)
        elif node.op_type != "Identity":
            ops.append(node.op_type)
    return ops


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--budget", type=float, default=20.0, help="seconds of timing per layer at most")
    args = ap.parse_args(argv)
    print(f"threads={args.threads} (onnxruntime intra_op_num_threads, OpenVINO INFERENCE_NUM_THREADS)")
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        for title, xml, x in cases(Path(tmp)):
            run_ov, ref = _ov_runner(xml, x, args.threads)
            runners, chains, chosen = {"openvino": run_ov}, {}, None
            for key, form, cap in (("convtranspose", "convtranspose", None), ("phase-chain", "phase", 0),
                                   ("phase", "phase", None), (None, None, None)):
                fn, got, chain = _ort_runner(xml, x, args.threads, form, cap)
                err = float(np.abs(got - ref).max() / np.abs(ref).max())
                if err > 1e-4:
                    raise SystemExit(f"{title}: {key or 'chosen'} differs from OpenVINO by {err:.2e} (relative)")
                if key is None:
                    chosen = next(k for k, c in chains.items() if c == chain)
                elif chain not in chains.values():  # else that form is not expressible here
                    runners[key], chains[key] = fn, chain
            res, n = measure(runners, args.rounds, args.budget)
            print(f"\n{title}  ({n} timing rounds)")
            print(f"  {'openvino':14s} {res['openvino'][0] * 1e3:8.2f} ms (median)")
            for key in chains:
                ms, ratio, best = res[key][0] * 1e3, res[key][1], res[key][2]
                mark = "<- chosen" if key == chosen else "         "
                print(f"  {key:14s} {ms:8.2f} ms  {ratio:5.2f}x (fastest runs {best:4.2f}x) {mark} [{chains[key]}]")
            summary.append(f"  {res[chosen][1]:5.2f}x  {chosen:14s} {title}")
    print("\nchosen formulation, onnxruntime / OpenVINO (median of per-round ratios):")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
