"""BatchToSpace-2 on onnxruntime vs numpy.copy and OpenVINO (issue 3).

    python benchmarks/bench_batch_to_space.py [--threads 2] [--reps 15] [--quick]

For each case an IR is written by OpenVINO, converted by ir2onnx, and timed on onnxruntime
(CPU, ``--threads`` intra-op threads, no spinning) next to ``numpy.copy`` of the input's bytes and
OpenVINO's own BatchToSpace (CPU, the same thread count, input and output shared, no copies).
Rows: ``auto`` is what the converter emits (the formulation is printed), ``auto?`` the same from
an IR with a dynamic batch (``?`` in the IR; fed the same data), ``chain`` forces the
Reshape/Transpose/Reshape/Slice chain (unit axes dropped, co-moving axes merged), ``plain`` is the
spec's chain node for node (one rank-(2N-1) Transpose, no folding) for reference. Every output is
checked against OpenVINO's bit for bit. Times are the minimum (and median) of ``--reps`` runs.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov
import openvino.opset15 as ops
from onnx import TensorProto, helper, numpy_helper

import ir2onnx
import ir2onnx.ops.batch_to_space as b2s

CASES = [  # name, data shape, block_shape, crops_begin, crops_end  (f32)
    ("4-D 64 MiB, crops not block-aligned", (16, 128, 128, 64), [1, 4, 4, 1], [0, 1, 2, 0], [0, 3, 1, 0]),
    ("4-D 64 MiB, block-aligned crops", (16, 128, 128, 64), [1, 4, 4, 1], [0, 4, 0, 0], [0, 0, 8, 0]),
    ("5-D 61 MiB, worked example 2's pattern", (48, 12, 24, 36, 32), [1, 2, 4, 3, 1], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0]),
    ("4-D 64 MiB NCHW, W blocked", (16, 64, 128, 128), [1, 1, 4, 4], [0, 0, 1, 2], [0, 0, 3, 1]),
    ("5-D 64 MiB, every axis blocked", (16, 32, 32, 32, 32), [1, 2, 2, 2, 2], [0, 1, 0, 1, 0], [0, 0, 3, 0, 1]),
]


def timed(fn, reps: int) -> tuple[float, float]:
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)


def ort_session(model: onnx.ModelProto, threads: int) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def plain_chain(shape, B, CB, CE) -> onnx.ModelProto:
    """The spec's four nodes, unoptimized (what a straightforward lowering emits)."""
    k, bp = len(shape) - 1, shape[0] // int(np.prod(B))
    perm = [k] + [a for i in range(k) for a in (k + 1 + i, i)]
    full = [bp] + [shape[i + 1] * B[i + 1] for i in range(k)]
    consts = {"s1": B[1:] + [bp] + list(shape[1:]), "s3": full, "st": CB[1:],
              "en": [full[i + 1] - CE[i + 1] for i in range(k)], "ax": list(range(1, k + 1))}
    nodes = [helper.make_node("Reshape", ["x", "s1"], ["a"], allowzero=1),
             helper.make_node("Transpose", ["a"], ["t"], perm=perm),
             helper.make_node("Reshape", ["t", "s3"], ["r"], allowzero=1),
             helper.make_node("Slice", ["r", "st", "en", "ax"], ["y"])]
    graph = helper.make_graph(nodes, "plain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in consts.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def formulation(model: onnx.ModelProto) -> str:
    ops_ = [n.op_type for n in model.graph.node if n.op_type not in ("Identity", "Add")]
    return "gather" if "Gather" in ops_ else "chain: " + ",".join(ops_)


def run_case(name, shape, B, CB, CE, threads: int, reps: int, tmp: Path) -> None:
    x = np.random.default_rng(0).standard_normal(shape, dtype=np.float32)
    for dynamic in (True, False):
        param = ops.parameter([-1 if dynamic and i == 0 else d for i, d in enumerate(shape)], ov.Type.f32, name="data")
        node = ops.batch_to_space(param, *(np.array(v, np.int64) for v in (B, CB, CE)))
        xml = tmp / ("b2s_dynamic.xml" if dynamic else "b2s.xml")
        ov.save_model(ov.Model([node], [param]), xml, compress_to_fp16=False)

    compiled = ov.Core().compile_model(str(xml), "CPU", {"INFERENCE_NUM_THREADS": threads,
                                                         "INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    expected = np.array(request.infer([x])[0])
    t_copy = timed(lambda: np.copy(x), reps)
    t_ov = timed(lambda: request.infer([x], share_inputs=True, share_outputs=True), reps)
    del request, compiled

    models = {"auto": ir2onnx.convert(xml), "auto?": ir2onnx.convert(tmp / "b2s_dynamic.xml")}
    b2s.FORMULATION = "chain"
    models["chain"] = ir2onnx.convert(xml)
    b2s.FORMULATION = None
    models["plain"] = plain_chain(list(shape), B, CB, CE)
    print(f"\n{name}: data {list(shape)} f32 ({x.nbytes / 2**20:.0f} MiB), block {B}, crops {CB} / {CE}, "
          f"{threads} thread(s)")
    print(f"  numpy.copy        {t_copy[0] * 1e3:7.1f} ms (median {t_copy[1] * 1e3:.1f})")
    print(f"  OpenVINO          {t_ov[0] * 1e3:7.1f} ms (median {t_ov[1] * 1e3:.1f})  {t_ov[0] / t_copy[0]:.2f}x copy")
    for label, model in models.items():
        sess = ort_session(model, threads)
        out = sess.run(None, {sess.get_inputs()[0].name: x})[0]
        assert out.shape == expected.shape and out.tobytes() == expected.tobytes(), f"{label}: differs from OpenVINO"
        t = timed(lambda: sess.run(None, {sess.get_inputs()[0].name: x}), reps)
        what = formulation(model) if label != "plain" else "Reshape,Transpose,Reshape,Slice unfolded"
        print(f"  onnxruntime {label:5s} {t[0] * 1e3:7.1f} ms (median {t[1] * 1e3:.1f})  {t[0] / t_copy[0]:.2f}x copy  "
              f"{t[0] / t_ov[0]:.2f}x OpenVINO   [{what}]")
        del sess


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="only the first (issue's) case")
    args = ap.parse_args()
    print(f"onnxruntime {ort.__version__}, OpenVINO {ov.__version__}, ir2onnx {ir2onnx.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES[:1] if args.quick else CASES:
            run_case(*case, threads=args.threads, reps=args.reps, tmp=Path(tmp))


if __name__ == "__main__":
    main()
