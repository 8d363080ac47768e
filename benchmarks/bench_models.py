"""Whole models: ir2onnx's ONNX against torch.onnx.export's and against OpenVINO on the IR.

Run by hand in a venv with torch, torchvision, transformers, openvino, onnxruntime, onnx and
onnxscript (none of them are test dependencies), with this repository on PYTHONPATH:

    python benchmarks/bench_models.py [--models resnet50,bert] [--quick] [--threads 2]

For each model (benchmarks/model_zoo.py: random weights, seed 0, rounded to f16), in a process of
its own:
- the IR is written as users do: ``openvino.convert_model(model, example_input=...)`` and
  ``openvino.save_model`` with its defaults (f16 weights, dynamic dims);
- ir2onnx converts it twice: as it is (dynamic dims) and with ``shapes=`` fixing the example's
  dims (``convert --shape``);
- torch.onnx.export exports the same module with the TorchScript exporter (opset 17) and the
  dynamo exporter, each with the dims of model_zoo dynamic (``dynamic_axes``) and static;
- like is compared with like: ir2onnx dynamic against the best dynamic export, ir2onnx with fixed
  shapes against the best static export; every ONNX runs on onnxruntime with default graph
  optimizations, and OpenVINO runs the IR with the f32 precision hint; for the transformers the
  onnxruntime.transformers optimizer is applied to ir2onnx's and TorchScript's ONNX alike (``+tf``);
- every runtime uses the same threads (onnxruntime intra-op, thread spinning off; OpenVINO
  INFERENCE_NUM_THREADS) and they are timed in alternated blocks (benchmarks/timing.py);
- each ONNX's outputs are compared with torch's first (max abs difference over max abs value);
- node counts are those of the ONNX and of onnxruntime's optimized model
  (``SessionOptions.optimized_model_filepath``); "fusions" lists the op types onnxruntime's
  optimizer (and the transformers optimizer) made that the ONNX did not have.

``--quick`` times fewer and shorter blocks. Each ratio is printed as "median / fastest": the
median over rounds of the ratio of block medians, and the ratio of the fastest single runs (on
a machine shared with other work the fastest runs are the ones least disturbed).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def ort_session(path: str, threads: int, optimized: str | None = None):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.add_session_config_entry("session.inter_op.allow_spinning", "0")
    so.log_severity_level = 3
    if optimized:
        so.optimized_model_filepath = optimized
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def op_counts(path: str) -> collections.Counter:
    import onnx

    m = onnx.load(path, load_external_data=False)
    return collections.Counter((n.domain + "." if n.domain not in ("", "ai.onnx") else "") + n.op_type
                               for n in m.graph.node)


def export_torch(spec, path: str, dynamo: bool, dynamic: bool) -> None:
    import torch

    names = list(spec.inputs)
    args = tuple(spec.inputs.values())
    kw = dict(input_names=names, output_names=["out"])
    if dynamic and not dynamo:
        kw["dynamic_axes"] = {n: dict(a) for n, a in spec.dynamic.items()}
    if dynamo:
        if dynamic:  # positional, in input order (model_zoo's wrappers take *args)
            kw["dynamic_shapes"] = tuple({a: torch.export.Dim.DYNAMIC for a in spec.dynamic.get(n, {})}
                                         for n in names)
        torch.onnx.export(spec.module, args, path, dynamo=True, external_data=False, **kw)
    else:
        torch.onnx.export(spec.module, args, path, dynamo=False, opset_version=17, **kw)


def tf_optimize(spec, src: str, dst: str) -> dict:
    from onnxruntime.transformers.optimizer import optimize_model

    m = optimize_model(src, model_type=spec.tf_type, num_heads=spec.heads, hidden_size=spec.hidden,
                       opt_level=0, use_gpu=False)
    m.save_model_to_file(dst)
    return {k: v for k, v in m.get_fused_operator_statistics().items() if v}


def run_one(name: str, quick: bool, threads: int) -> dict:
    import numpy as np
    import openvino as ov
    import torch

    import model_zoo
    from ir2onnx.api import convert_file
    from timing import measure

    res = {"model": name, "errors": {}, "nodes": {}, "fusions": {}, "ort_fusions": {}, "diff": {}}
    spec = model_zoo.build(name)
    feeds = {k: v.numpy() for k, v in spec.inputs.items()}
    with torch.no_grad():
        ref = spec.module(*spec.inputs.values())
    ref = (ref[0] if isinstance(ref, (tuple, list)) else ref).numpy()
    tmp = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
    xml = tmp / "model.xml"
    t = time.perf_counter()
    example = tuple(spec.inputs.values())
    try:
        ovm = ov.convert_model(spec.module, example_input=example)
    except Exception:  # noqa: BLE001  ViT: "Tracing failed sanity checks"; OpenVINO's message
        # suggests passing a TorchScript module traced by the user, as done here
        res["errors"]["IR"] = "convert_model failed its trace check; IR from torch.jit.trace(check_trace=False)"
        ovm = ov.convert_model(torch.jit.trace(spec.module, example, check_trace=False), example_input=example)
    for port, n in zip(ovm.inputs, spec.inputs):
        port.get_tensor().set_names({n})
    ov.save_model(ovm, str(xml))
    res["ir_s"] = time.perf_counter() - t
    files: dict[str, str] = {}
    static = {n: tuple(v.shape) for n, v in spec.inputs.items()}
    for key, shapes in (("ir2onnx", None), ("ir2onnx static", static)):
        t = time.perf_counter()
        try:
            files[key] = str(convert_file(xml, tmp / f"{key.replace(' ', '_')}.onnx", shapes=shapes))
            res[f"{key} convert_s"] = time.perf_counter() - t
        except Exception as e:  # noqa: BLE001  (reported in the table)
            res["errors"][key] = f"{type(e).__name__}: {e}"[:300]
    for exporter, dynamo in (("torchscript", False), ("dynamo", True)):
        for dynamic in (True, False):
            key = exporter + ("" if dynamic else " static")
            path = str(tmp / f"{key.replace(' ', '_')}.onnx")
            try:
                export_torch(spec, path, dynamo, dynamic)
                files[key] = path
            except Exception as e:  # noqa: BLE001
                res["errors"][key] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
    if spec.tf_type:
        for key in [k for k in ("ir2onnx", "ir2onnx static", "torchscript", "torchscript static") if k in files]:
            dst = files[key][:-5] + "_tf.onnx"
            try:
                res["fusions"][key + " +tf"] = tf_optimize(spec, files[key], dst)
                files[key + " +tf"] = dst
            except Exception as e:  # noqa: BLE001
                res["errors"][key + " +tf"] = f"{type(e).__name__}: {e}"[:300]
    runners = {}
    core = ov.Core()
    # no pinning: on a machine shared with other work a pinned thread waits for its core
    compiled = core.compile_model(str(xml), "CPU", {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32",
                                                    "PERFORMANCE_HINT": "LATENCY", "ENABLE_CPU_PINNING": False})
    req = compiled.create_infer_request()
    out = req.infer(feeds)[compiled.outputs[0]]
    res["diff"]["openvino"] = float(np.abs(out - ref).max() / max(np.abs(ref).max(), 1e-12))
    runners["openvino"] = lambda: req.infer(feeds)
    for key, path in files.items():
        opt = path[:-5] + "_ort.onnx"
        try:
            sess = ort_session(path, threads, optimized=opt)
            out = sess.run(None, feeds)[0]
        except Exception as e:  # noqa: BLE001
            res["errors"][key] = f"onnxruntime: {type(e).__name__}: {e}"[:300]
            continue
        res["diff"][key] = float(np.abs(out - ref).max() / max(np.abs(ref).max(), 1e-12))
        before, after = op_counts(path), op_counts(opt)
        res["nodes"][key] = [sum(before.values()), sum(after.values())]
        made = {op: c for op, c in after.items() if op not in before}
        res["ort_fusions"][key] = made
        os.remove(opt)
        sess = ort_session(path, threads)
        runners[key] = (lambda s: lambda: s.run(None, feeds))(sess)
    rounds, budget, block, settle = (3, 20.0, 6, 3) if quick else (8, 60.0, 20, 10)
    timed, n = measure(runners, rounds, budget, block=block, settle=settle)
    res["rounds"] = n
    res["ms"] = {k: v[0] * 1e3 for k, v in timed.items()}
    res["vs_ov"] = {k: v[1] for k, v in timed.items()}
    res["vs_ov_fastest"] = {k: v[2] for k, v in timed.items()}
    del runners, req, compiled
    shutil.rmtree(tmp, ignore_errors=True)
    return res


def _best(res: dict, keys: list[str]) -> tuple[str, float] | None:
    got = [(k, res["vs_ov"][k]) for k in keys if k in res.get("vs_ov", {})]
    return min(got, key=lambda kv: kv[1]) if got else None


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def table(results: list[dict]) -> str:
    """Markdown tables: ratios, latencies, node counts and fusions."""
    rows = ["| model | dyn: ir2onnx / best export | static: ir2onnx --shape / best static export | "
            "ir2onnx / OpenVINO (dyn; static) | +tf: ir2onnx / TorchScript (dyn; static) |",
            "|---|---|---|---|---|"]
    lat = ["| model | " + " | ".join(["OpenVINO", "ir2onnx", "ir2onnx static", "torchscript", "torchscript static",
                                        "dynamo", "dynamo static", "ir2onnx +tf", "torchscript +tf"]) + " |",
           "|---|" + "---|" * 9]
    nodes = ["| model | ONNX nodes -> after onnxruntime (ir2onnx; static; TorchScript; TorchScript static; dynamo) "
             "| max rel. diff vs torch (ir2onnx; static) | fusions in ir2onnx's ONNX (static) | fusions in the best export's |",
             "|---|---|---|---|---|"]
    for r in results:
        if "vs_ov" not in r:
            rows.append(f"| {r['model']} | failed: {r.get('failed', '?')} | | | |")
            continue
        med, fast = r["vs_ov"], r.get("vs_ov_fastest", {})

        def pair(a, b):  # "median ratio / fastest-runs ratio" of a to b
            m = f"{med[a] / med[b]:.2f}" if a in med and b in med else "-"
            return m + (f" / {fast[a] / fast[b]:.2f}" if a in fast and b in fast else "")

        def vs_best(a, keys):
            b = _best(r, keys)
            return f"{pair(a, b[0])} ({b[0]})" if b and a in med else "-"

        rows.append(f"| {r['model']} | {vs_best('ir2onnx', ['torchscript', 'dynamo'])} | "
                    f"{vs_best('ir2onnx static', ['torchscript static', 'dynamo static'])} | "
                    f"{pair('ir2onnx', 'openvino')}; {pair('ir2onnx static', 'openvino')} | "
                    f"{pair('ir2onnx +tf', 'torchscript +tf')}; {pair('ir2onnx static +tf', 'torchscript static +tf')} |")
        ms = r["ms"]
        lat.append(f"| {r['model']} | " + " | ".join(_fmt(ms.get(k)) for k in (
            "openvino", "ir2onnx", "ir2onnx static", "torchscript", "torchscript static", "dynamo",
            "dynamo static", "ir2onnx +tf", "torchscript +tf")) + " |")
        nc = "; ".join("{}->{}".format(*r["nodes"][k]) if k in r["nodes"] else "-" for k in (
            "ir2onnx", "ir2onnx static", "torchscript", "torchscript static", "dynamo"))
        diff = "; ".join(f"{r['diff'][k]:.1e}" if k in r["diff"] else "-" for k in ("ir2onnx", "ir2onnx static"))
        best = _best(r, ["torchscript static", "dynamo static"])

        def fus(k):
            k = k + " +tf" if k + " +tf" in r["ort_fusions"] else k
            f = {**r["fusions"].get(k, {}), **r["ort_fusions"].get(k, {})}
            return ", ".join(f"{op} {c}" for op, c in sorted(f.items())) or "none"

        nodes.append(f"| {r['model']} | {nc} | {diff} | {fus('ir2onnx static')} | "
                     f"{fus(best[0]) if best else '-'} |")
    errs = [f"- {r['model']} {k}: {e}" for r in results for k, e in r.get("errors", {}).items()]
    return "\n".join(rows + [""] + ["Median latency (ms):", ""] + lat + [""] + nodes + [""] + errs)


def main() -> None:
    import model_zoo

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(model_zoo.ALL), help="comma-separated subset")
    ap.add_argument("--quick", action="store_true", help="fewer, shorter timing blocks")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", help="append each model's result as a JSON line to this file")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print("RESULT " + json.dumps(run_one(args.one, args.quick, args.threads)))
        return
    results = []
    for name in args.models.split(","):
        cmd = [sys.executable, __file__, "--one", name, "--threads", str(args.threads)] + (["--quick"] if args.quick else [])
        t = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        line = next((l for l in p.stdout.splitlines() if l.startswith("RESULT ")), None)
        r = json.loads(line[7:]) if line else {"model": name, "failed": (p.stderr.strip().splitlines() or ["?"])[-1][:200]}
        print(f"{name}: {time.perf_counter() - t:.0f} s", file=sys.stderr)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(r) + "\n")
        results.append(r)
    print(table(results))


if __name__ == "__main__":
    main()
