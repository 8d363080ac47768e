"""``check --round-trip`` over every bundled IR: OpenVINO's ONNX frontend reads ir2onnx's file
(``openvino:onnx``) and its outputs are compared with OpenVINO on the IR, on the same inputs.
One line per model and the counts: pass / OpenVINO cannot read the ONNX / differs / OpenVINO
cannot run the IR itself. Each OpenVINO run is in a child process (a crash is a finding).

    python benchmarks/round_trip_samples.py [--target onnxruntime] [--root samples] [--match S] [MORE.xml ...]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ir2onnx.errors import Ir2OnnxError  # noqa: E402
from ir2onnx.harness.check import check  # noqa: E402
from ir2onnx.harness.round_trip import NAME  # noqa: E402


def classify(xml, target: str) -> tuple[str, str]:
    """``(status, why)`` of one IR's round trip."""
    try:
        result = check(xml, oracle=False, isolate_openvino=True, round_trip=True, target=target)
    except Ir2OnnxError as e:
        return "not converted", " ".join(str(e).split())[:200]
    ir, back = result.backend("openvino"), result.backend(NAME)
    if ir is None or ir.status != "ok":
        return "IR refused", (ir.message if ir else "")[:200]
    if back.status == "refused":
        return "cannot read", back.message[-300:]
    if back.status != "ok":
        return "error", back.message[:300]
    bad = [f"{o.name}: {c.detail or c.reason or f'max abs {c.max_abs:.3g}'}" for o in result.outputs
           for c in o.comparisons if NAME in (c.a, c.b) and "openvino" in (c.a, c.b) and not c.passed]
    return ("differs", "; ".join(bad)[:300]) if bad else ("pass", "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent / "samples"))
    ap.add_argument("--target", default="onnxruntime")
    ap.add_argument("--match", default="")
    ap.add_argument("more", nargs="*", help="more IR .xml files (real models)")
    args = ap.parse_args()
    models = sorted(p for p in Path(args.root).rglob("*.xml") if args.match in str(p)) + [Path(m) for m in args.more]
    counts: dict[str, int] = {}
    for xml in models:
        start = time.perf_counter()
        status, why = classify(xml, args.target)
        counts[status] = counts.get(status, 0) + 1
        print(f"{status:13} {time.perf_counter() - start:6.1f} s  {xml}  {why}", flush=True)
    print(f"round trip, target {args.target}, {len(models)} IRs: "
          + ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: -kv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
