"""The SSD-style sample (samples/ssd: the Open Model Zoo's PriorBoxClustered + DetectionOutput
head) converted and run on onnxruntime, as a ratio to OpenVINO running the same IR with the same
thread count.

Cases: the committed IR as it is (dynamic batch: ir2onnx computes the priors from the run-time
ShapeOf in the graph) at batch 1 and 2, and the same model reshaped to a static [1, 3, 64, 64]
and saved again by OpenVINO (the zoo ships static shapes: the priors fold to one constant).
The benchmark reads a copy of the IR (the .xml and the .bin copied into a temporary folder), so
the committed files are never opened by either runtime. Each case checks first that
onnxruntime's detections equal OpenVINO's row for row (labels exactly, values within 1e-4).
Timing: rounds in which OpenVINO and onnxruntime each run ``settle`` untimed runs and then a
block of ``block`` timed runs back to back (a runtime timed right after the other one, before its
threads settle, was measured up to 2x slower on a 2-core machine); the ratio printed is the
median over rounds of (onnxruntime / OpenVINO) block medians, "fastest runs" is min / min (on a
machine loaded by other processes OpenVINO's medians were measured 3-10x above its fastest runs,
onnxruntime's within 1.5x: read both numbers).
Threads: onnxruntime intra_op_num_threads (inter_op 1) and OpenVINO INFERENCE_NUM_THREADS.
About 20 seconds.

    python benchmarks/bench_ssd.py [--threads 2] [--rounds 15] [--budget 6]
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from timing import measure  # noqa: E402  (benchmarks/ is the script's folder)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ir2onnx.api import convert  # noqa: E402

SAMPLE = ROOT / "samples" / "ssd"


def copy_ir(folder: Path) -> Path:
    for suffix in (".xml", ".bin"):
        shutil.copyfile(SAMPLE / f"ssd{suffix}", folder / f"ssd{suffix}")
    return folder / "ssd.xml"


def static_ir(xml: Path, batch: int) -> Path:
    """The model with img reshaped to [batch, 3, 64, 64], saved again by OpenVINO (f16 weights)."""
    import openvino as ov

    model = ov.Core().read_model(str(xml))
    model.reshape({"img": [batch, 3, 64, 64]})
    out = xml.with_name(f"ssd_static{batch}.xml")
    ov.save_model(model, str(out))
    return out


def ov_runner(xml: Path, img: np.ndarray, threads: int):
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU",
                                  {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    return lambda: request.infer([img]), np.array(request.infer([img])[compiled.outputs[0]])


def ort_runner(xml: Path, img: np.ndarray, threads: int):
    import onnxruntime as ort

    model = convert(xml)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    feeds = {"img": img}
    return (lambda: sess.run(None, feeds)), sess.run(None, feeds)[0], runtime_node_count(model)


def runtime_node_count(model) -> int:
    """Nodes that run per inference (nodes fed only by initializers are folded at load)."""
    known, count = {t.name for t in model.graph.initializer}, 0
    for node in model.graph.node:
        if all(i in known for i in node.input if i):
            known.update(node.output)
        elif node.op_type != "Identity":
            count += 1
    return count


def same_rows(got: np.ndarray, want: np.ndarray) -> bool:
    return (got.shape == want.shape and np.array_equal(got[..., :2], want[..., :2])
            and np.allclose(got[..., 2:], want[..., 2:], rtol=1e-4, atol=1e-4))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--budget", type=float, default=6.0, help="seconds of timing per case at most")
    args = ap.parse_args(argv)
    import onnxruntime
    import openvino

    print(f"onnxruntime {onnxruntime.__version__}, openvino {openvino.__version__}, {os.cpu_count()} CPUs, "
          f"threads={args.threads} (onnxruntime intra_op_num_threads, OpenVINO INFERENCE_NUM_THREADS)")
    rng = np.random.default_rng(0)
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        xml = copy_ir(Path(tmp))
        cases = [("sample, dynamic batch, batch 1", xml, 1), ("sample, dynamic batch, batch 2", xml, 2),
                 ("static [1,3,64,64] copy", static_ir(xml, 1), 1)]
        for title, path, batch in cases:
            img = rng.uniform(0, 1, (batch, 3, 64, 64)).astype(np.float32)
            run_ov, want = ov_runner(path, img, args.threads)
            run_ort, got, nodes = ort_runner(path, img, args.threads)
            if not same_rows(got, want):
                raise SystemExit(f"{title}: onnxruntime's detections differ from OpenVINO's")
            res, n = measure({"openvino": run_ov, "onnxruntime": run_ort}, args.rounds, args.budget)
            t_ov, (t_ort, ratio, fastest) = res["openvino"][0], res["onnxruntime"]
            print(f"\n{title}  ({n} timing rounds, {nodes} ONNX nodes run per inference)")
            print(f"  openvino     {t_ov * 1e3:7.3f} ms (median)")
            print(f"  onnxruntime  {t_ort * 1e3:7.3f} ms  {ratio:5.2f}x OpenVINO (fastest runs {fastest:4.2f}x)")
            summary.append(f"  {ratio:5.2f}x  (fastest runs {fastest:4.2f}x)  {title}")
    print("\nonnxruntime / OpenVINO (median of per-round ratios; fastest runs):")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
