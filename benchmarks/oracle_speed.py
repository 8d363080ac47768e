"""How long the oracle interpreter takes on a model against what its budget estimates.

``ir2onnx check`` skips the oracle past ``--oracle-budget`` operations (harness/oracle_budget.py,
which states a rate of about 1e9 of its operations per second on one core). This script runs the
oracle on each model given (or every bundled sample), one model per process so that one model's
memory does not slow the next, and prints the estimate, the seconds, the operations per second
and the ratio of the measured seconds to those the stated rate predicts (within 3x either way:
the estimate is right to the factor the budget needs), then the five layer types that took longest.

    python benchmarks/oracle_speed.py [MODEL.xml ...] [--repeat 2]

A person-detection-sized Open Model Zoo detector (pedestrian-detection-adas-0002 FP16, 1.4e9
estimated operations) is the case the harness issue measured at 24.5 s: pass its .xml.
"""
from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import time
from pathlib import Path

RATE = 1e9  # the rate harness/oracle_budget.py states


def one(xml: str, repeat: int) -> dict:
    import ir2onnx
    from ir2onnx.harness.backends import make_feeds
    from ir2onnx.harness.oracle_budget import estimate
    from ir2onnx.ir.names import input_name, parameters
    from ir2onnx.lowering.convert import computed_graph
    from ir2onnx.oracles import interpreter
    from ir2onnx.runtime.example_inputs import fill

    graph = computed_graph(ir2onnx.load_ir(xml), "f32")
    given, _, _ = fill(graph.xml_path, [input_name(p) for p in parameters(graph)], None, None)
    feeds, _ = make_feeds(graph, given, None, 0)
    per_type: collections.Counter = collections.Counter()
    plain = interpreter.oracle_for

    def timed(kind, version):
        fn = plain(kind, version)
        if fn is None:
            return None

        def run(layer, inputs, *a, **k):
            t = time.perf_counter()
            try:
                return fn(layer, inputs, *a, **k)
            finally:
                per_type[kind] += time.perf_counter() - t
        return run

    interpreter.oracle_for = timed
    best = float("inf")
    for _ in range(repeat):
        per_type.clear()
        t = time.perf_counter()
        interpreter.evaluate(graph, feeds)
        best = min(best, time.perf_counter() - t)
    return {"estimate": estimate(graph, feeds), "seconds": best, "top": per_type.most_common(5)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", help="IR .xml files (default: every bundled sample)")
    ap.add_argument("--repeat", type=int, default=2, help="runs per model, the fastest counts (default 2)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.repeat)))
        return 0
    root = Path(__file__).resolve().parent.parent
    models = args.models or sorted(str(p) for p in (root / "samples").rglob("*.xml"))
    print(f"{'model':60s} {'estimate':>9s} {'seconds':>8s} {'ops/s':>8s} {'vs 1e9/s':>8s}  slowest layer types")
    for xml in models:
        p = subprocess.run([sys.executable, __file__, "--one", xml, "--repeat", str(args.repeat)],
                           capture_output=True, text=True)
        if p.returncode:
            print(f"{xml:60s} failed: {(p.stderr.strip().splitlines() or ['?'])[-1][:80]}")
            continue
        r = json.loads(p.stdout.strip().splitlines()[-1])
        rate = r["estimate"] / max(r["seconds"], 1e-9)
        top = ", ".join(f"{k} {v:.2f}s" for k, v in r["top"][:3])
        print(f"{Path(xml).name[:60]:60s} {r['estimate']:9.2g} {r['seconds']:8.2f} {rate:8.2g} "
              f"{r['seconds'] / (r['estimate'] / RATE):8.2f}  {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
