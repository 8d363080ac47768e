"""``ir2onnx selftest``: its options and its main (the cases run in :mod:`ir2onnx.selftest.runner`)."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from ..errors import Ir2OnnxError
from ..harness.backends import provider_status
from ..selftest.matrix import NOT_RUN, format_matrix, matrix, report_text
from ..selftest.runner import run
from ..testing import openvino_available
from ..writer import atomic_file
from .paths import os_errors


def add_command(sub) -> None:
    p = sub.add_parser(
        "selftest", help="run the built-in cases and print the conformance matrix",
        description="Write every built-in case (the specs' worked examples and more) as IR, convert "
                    "it, run it on each onnxruntime provider and on OpenVINO, and compare with the "
                    "NumPy oracles (bit for bit for data movement). Prints the matrix op x backend; "
                    "a provider without its hardware is 'unavailable', never 'pass'. Exit 1 when a "
                    "case fails.",
        epilog="example:\n  ir2onnx selftest\n  ir2onnx selftest --provider cpu -k d2s/",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--provider", choices=["cpu", "cuda", "all"], default="all",
                   help="onnxruntime provider(s) (default all: every one, unavailable ones marked)")
    p.add_argument("-k", dest="select", action="append", default=[], metavar="TEXT",
                   help="only cases whose name contains TEXT (repeatable)")
    p.add_argument("--no-openvino", action="store_true", help="do not run OpenVINO")
    p.add_argument("--opset", type=int, help="force this ONNX opset (default: the lowest >= 17 that every layer needs)")
    p.add_argument("--strict", action="store_true",
                   help="also exit 1 for ops without lowering, oracle or case")
    p.add_argument("--report", metavar="OUT.md",
                   help="also write the matrix to a Markdown file (into a file with matrix:start/end "
                        "markers, such as docs/conformance.md, between them)")
    p.set_defaults(func=cmd_selftest)


def cmd_selftest(args) -> int:
    start = time.perf_counter()
    columns, results = run(args.provider, args.select, not args.no_openvino, args.opset)
    if not results:
        raise Ir2OnnxError(f"no case matches {args.select}")
    why = {f"ort:{p}": provider_status(p)[1] for p in ("cpu", "cuda")}
    why["openvino"] = "" if openvino_available() else "openvino is not installed"
    text = format_matrix(columns, results, why)
    print(text)
    print(f"\n{len(results)} case(s) in {time.perf_counter() - start:.1f} s")
    if args.report:
        path = Path(args.report)
        previous = path.read_text(encoding="utf-8") if path.is_file() else None
        with os_errors("write the --report file"), atomic_file(path, "w", what="--report file") as f:
            f.write(report_text(previous, text))
    if any(r.failed for r in results):
        return 1
    if args.strict and any(any(k in cell for k in NOT_RUN + ("no case",))
                           for _, _, cells in matrix(columns, results) for cell in cells):
        return 1
    return 0
