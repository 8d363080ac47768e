"""``--target onnx`` (or another target) against the default on every bundled IR: the opset each
chose, the nodes outside the standard domain (counted: the ``onnx`` target must have none) and
whether every output equals the default target's on onnxruntime (the check's inputs and rules:
:func:`ir2onnx.testing.targets.compare_targets`); an INT8 IR whose QDQ file differs only through
onnxruntime's int8 kernels (equal with its graph optimizations off) is counted as ``int8``.
Prints one line per model and the counts.

    python benchmarks/target_samples.py [--target onnx] [--opset N] [--root samples] [--match S] [MORE.xml ...]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ir2onnx.errors import Ir2OnnxError  # noqa: E402
from ir2onnx.testing.targets import compare_targets  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent / "samples"))
    ap.add_argument("--target", default="onnx")
    ap.add_argument("--opset", type=int)
    ap.add_argument("--match", default="")
    ap.add_argument("more", nargs="*", help="more IR .xml files (real models)")
    args = ap.parse_args()
    models = sorted(p for p in Path(args.root).rglob("*.xml") if args.match in str(p)) + [Path(m) for m in args.more]
    counts = {"equal": 0, "int8": 0, "differ": 0, "refused": 0}
    odd_total = 0
    for xml in models:
        start = time.perf_counter()
        try:
            r = compare_targets(xml, args.target, args.opset)
        except Ir2OnnxError as e:
            counts["refused"] += 1
            print(f"refused  {xml}: {' '.join(str(e).split())[:200]}", flush=True)
            continue
        odd_total += len(r.nonstandard)
        status = "equal" if not r.failures else "int8" if r.as_onnx == [] else "differ"
        counts[status] += 1
        print(f"{status:8} {xml}  opset {r.default_opset}->{r.opset}  non-standard {len(r.nonstandard)}  "
              f"outputs {r.compared}  {time.perf_counter() - start:.1f} s  {'; '.join(r.failures)[:300]}", flush=True)
    print(f"target {args.target}{f' opset {args.opset}' if args.opset else ''}: {len(models)} models: "
          f"{counts['equal']} equal to the default target's outputs, {counts['int8']} equal only as ONNX "
          f"(onnxruntime's int8 kernels off: its QLinearConv requantizes), {counts['differ']} differ, "
          f"{counts['refused']} refused; non-standard nodes: {odd_total}")
    return 0 if counts["differ"] == 0 and odd_total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
