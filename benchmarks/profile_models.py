"""Which onnxruntime kernels a model spends its time in: ir2onnx's ONNX (``--shape``) against the
TorchScript exporter's (static), by onnxruntime's profiler, per op type. For the models where
bench_models.py shows a gap: the kernel that differs is the limit.

    PYTHONPATH=. python benchmarks/profile_models.py wav2vec2 [--runs 20] [--nodes 8] [--openvino]

Same venv, models and session options as bench_models.py (2 threads, spinning off, default
optimizations). Prints ms per run and the count of each op type in the optimized graph that
onnxruntime ran, then with ``--nodes N`` the N slowest nodes of each. ``--openvino`` also prints
OpenVINO's time per layer type on the same IR (CPU plugin, f32 hint, 2 threads, its per-layer
performance counters), to name the kernel where onnxruntime is slower than OpenVINO.
"""
from __future__ import annotations

import argparse
import collections
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def profile(path: str, feeds: dict, runs: int, prefix: str, threads: int = 2):
    """{op type: (ms per run, nodes)} and {(op type, node): ms per run} over ``runs`` runs."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.log_severity_level = 3
    so.enable_profiling, so.profile_file_prefix = True, prefix
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    warm = 3
    for _ in range(warm + runs):
        sess.run(None, feeds)
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    starts = sorted(e["ts"] for e in events if e.get("name") == "model_run")
    cutoff = starts[warm]  # the warm-up runs' kernels are not counted
    events = [e for e in events if e.get("ts", 0) >= cutoff]
    by_op, count, by_node = collections.Counter(), collections.Counter(), collections.Counter()
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            op = e["args"]["op_name"]
            by_op[op] += e["dur"]
            count[op] += 1
            by_node[(op, e["name"][:-len("_kernel_time")])] += e["dur"]
    ms = lambda us: us / runs / 1000  # noqa: E731
    return ({op: (ms(d), count[op] // runs) for op, d in by_op.items()},
            {k: ms(d) for k, d in by_node.items()})


def profile_openvino(xml: str, feeds: dict, runs: int, threads: int = 2) -> dict:
    """{layer type (exec type): ms per run} from OpenVINO's performance counters."""
    import openvino as ov

    compiled = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "f32", "PERF_COUNT": "YES",
                                                    "INFERENCE_NUM_THREADS": str(threads)})
    request = compiled.create_infer_request()
    request.infer(feeds)  # warm-up
    total: collections.Counter = collections.Counter()
    for _ in range(runs):
        request.infer(feeds)
        for info in request.profiling_info:
            total[f"{info.node_type} ({info.exec_type})"] += info.real_time.total_seconds() * 1000
    return {k: v / runs for k, v in total.items()}


def main() -> None:
    import openvino as ov

    import model_zoo
    from bench_models import export_torch
    from ir2onnx.api import convert_file

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", choices=model_zoo.ALL)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--nodes", type=int, default=0, help="also print the N slowest nodes")
    ap.add_argument("--openvino", action="store_true", help="also OpenVINO's time per layer type")
    args = ap.parse_args()
    spec = model_zoo.build(args.model)
    tmp = Path(tempfile.mkdtemp(prefix=f"profile-{args.model}-"))
    try:
        m = ov.convert_model(spec.module, example_input=tuple(spec.inputs.values()))
        for port, n in zip(m.inputs, spec.inputs):
            port.get_tensor().set_names({n})
        ov.save_model(m, str(tmp / "model.xml"))
        shapes = {k: tuple(v.shape) for k, v in spec.inputs.items()}
        files = {"ir2onnx --shape": str(convert_file(tmp / "model.xml", tmp / "ir2onnx.onnx", shapes=shapes))}
        export_torch(spec, str(tmp / "torchscript.onnx"), dynamo=False, dynamic=False)
        files["torchscript static"] = str(tmp / "torchscript.onnx")
        feeds = {k: v.numpy() for k, v in spec.inputs.items()}
        for key, path in files.items():
            ops, nodes = profile(path, feeds, args.runs, str(tmp / key.split()[0]))
            print(f"== {args.model} {key}: {sum(v[0] for v in ops.values()):.2f} ms per run in kernels")
            for op, (t, n) in sorted(ops.items(), key=lambda kv: -kv[1][0]):
                print(f"  {op:32s} {t:8.2f} ms  x{n}")
            for (op, node), t in sorted(nodes.items(), key=lambda kv: -kv[1])[:args.nodes]:
                print(f"    {t:8.2f} ms  {op} {node[-80:]}")
        if args.openvino:
            times = profile_openvino(str(tmp / "model.xml"), feeds, args.runs)
            print(f"== {args.model} OpenVINO: {sum(times.values()):.2f} ms per run in layers")
            for kind, t in sorted(times.items(), key=lambda kv: -kv[1])[:15]:
                print(f"  {kind:48s} {t:8.2f} ms")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
