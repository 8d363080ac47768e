"""``ir2onnx check``: its options and its main (the check itself is :func:`ir2onnx.harness.check.check`)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import Ir2OnnxError
from ..harness.check import check
from ..harness.html_report import require_matplotlib
from ..harness.oracle_budget import DEFAULT_BUDGET
from ..harness.report import REPORT_SUFFIXES, format_text, write_report
from ..harness.rules import SCORE_THRESHOLD
from . import check_batch
from .batch import is_batch
from .feeds import add_feed_args, add_precision_arg, add_target_arg, parse_feeds
from .paths import model_xml, os_errors, writable


def add_command(sub) -> None:
    """Register ``check``."""
    p = sub.add_parser(
        "check", help="prove a converted model computes what the IR computes",
        description="Convert an IR model and run the same inputs through onnxruntime (each "
                    "provider), the NumPy oracle interpreter and OpenVINO (when installed). Prints, "
                    "per output, shape, dtype, max abs / rel error and pass/fail for each pair of "
                    "backends. Exit 0: all agree; 1: some pair disagrees or a backend failed; "
                    "2: bad input. An element agrees when |a-b| <= atol + rtol*max(|a|,|b|); "
                    "defaults (rtol, atol): f64 1e-9, 1e-12; f32 1e-4, 1e-4; f16 1e-2, 1e-2; "
                    "bf16 5e-2, 5e-2; integer and boolean outputs must be equal. In an INT8 IR "
                    "(FakeQuantize) float outputs are judged in quantization steps and by argmax "
                    "agreement unless --rtol/--atol are given; detections are matched box to box "
                    "above --score-threshold; in an INT8 IR or with --precision f16, class vectors, "
                    "attributes, embeddings and images are judged at task level (the rule table: "
                    "docs/check.md). Progress lines go to stderr; the oracle is skipped, saying "
                    "why, above --oracle-budget. Several models (a directory, a glob, several "
                    "files): each checked, then a summary table (model, backends compared, worst "
                    "error, rule, verdict, seconds); exit 1 when any disagrees; Ctrl-C prints the "
                    "table so far.",
        epilog="example:\n  ir2onnx check model.xml\n"
               "  ir2onnx check model.xml --shape x=2,3,8,8 --provider all --report check.md\n"
               "  ir2onnx check detector.xml --input data=frame.npy --report check.html\n"
               "  ir2onnx check model-int8.xml --layers\n"
               "  ir2onnx check models/ --jobs 2 --report zoo.json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", nargs="+", help="the IR .xml file; several, a directory (every IR under it) "
                                            "or a glob ('zoo/*/FP16/*.xml') for a summary table")
    p.add_argument("-w", "--weights", help="the .bin file (default: the .xml's stem + .bin)")
    add_feed_args(p)
    p.add_argument("--provider", choices=["cpu", "cuda", "openvino", "all"], default="cpu",
                   help="onnxruntime provider(s): all = cpu and cuda where available; openvino = "
                        "onnxruntime-openvino's OpenVINO provider, by name only (default cpu)")
    p.add_argument("--rtol", type=float, help="relative tolerance for float outputs (integers stay exact)")
    p.add_argument("--atol", type=float, help="absolute tolerance for float outputs (integers stay exact)")
    p.add_argument("--opset", type=int, help="force this ONNX opset (default: the lowest >= 17 that every layer needs)")
    add_precision_arg(p)
    add_target_arg(p)
    p.add_argument("--round-trip", action="store_true",
                   help="also read the converted ONNX with OpenVINO's ONNX frontend and run it "
                        "(backend openvino:onnx), compared with OpenVINO on the IR and the others; "
                        "a file the frontend cannot read is reported as refused (docs/targets.md)")
    p.add_argument("--no-openvino", action="store_true", help="do not run OpenVINO")
    p.add_argument("--no-oracle", action="store_true", help="do not run the NumPy oracles (big models)")
    p.add_argument("--oracle-budget", type=float, default=DEFAULT_BUDGET, metavar="N",
                   help="skip the oracle, saying so, when the model needs more than N multiply-adds "
                        f"and elements (estimated from the graph; default {DEFAULT_BUDGET:g}, "
                        "1-3 minutes of oracle time on a CNN; inf: never skip)")
    p.add_argument("--score-threshold", type=float, default=SCORE_THRESHOLD, metavar="S",
                   help="detections: compare the rows scoring above S, matched box to box "
                        f"(default {SCORE_THRESHOLD:g})")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                   help="several models: check N at once, each in its own process (default 1)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--report", metavar="OUT.json|OUT.md|OUT.html",
                   help="also write a report: JSON (schema: docs/check.md), Markdown, or one self-contained "
                        "HTML page with an error histogram and an onnxruntime-vs-OpenVINO scatter per "
                        "output and each backend's detection boxes drawn on an image input (needs "
                        "matplotlib: pip install 'ir2onnx[report]'); several models: one JSON or "
                        "Markdown report for all")
    p.add_argument("--layers", action="store_true",
                   help="also compare every layer's output of the converted model (onnxruntime) with "
                        "OpenVINO's, in graph order, and name the first layer beyond tolerance and the "
                        "growth after it (in the reports too; does not change the verdict)")
    p.set_defaults(func=cmd_check)


def cmd_check(args) -> int:
    given, shapes = parse_feeds(args)
    if not 0 <= args.score_threshold < 1:
        raise Ir2OnnxError(f"--score-threshold must be in [0, 1), got {args.score_threshold:g}")
    if args.report and Path(args.report).suffix.lower() not in REPORT_SUFFIXES:
        raise Ir2OnnxError(f"--report '{args.report}': the name must end in .json, .md or .html")
    batch = is_batch(args.model)
    if batch and args.report and Path(args.report).suffix.lower() == ".html":
        raise Ir2OnnxError(f"--report '{args.report}': several models take one .json or .md report")
    if args.report and Path(args.report).suffix.lower() == ".html":
        require_matplotlib()  # before the check, not after it
    if args.report:
        writable(Path(args.report), "--report file")  # before the check, not after it
    options = dict(inputs=given, shapes=shapes, providers=args.provider, rtol=args.rtol, atol=args.atol,
                   seed=args.seed, opset=args.opset, openvino=not args.no_openvino, oracle=not args.no_oracle,
                   isolate_openvino=True, precision=args.precision, oracle_budget=args.oracle_budget,
                   score_threshold=args.score_threshold, layers=args.layers, target=args.target,
                   round_trip=args.round_trip)
    if batch:
        if args.weights:
            raise Ir2OnnxError("-w/--weights names the .bin of one model: it cannot go with several")
        return check_batch.run(args.model, options, args.jobs, args.quiet, args.report)
    if args.jobs < 1:
        raise Ir2OnnxError(f"--jobs must be at least 1, got {args.jobs}")
    with os_errors("read"):
        result = check(model_xml(args.model[0]), args.weights, **options,
                       progress=None if args.quiet else lambda line: print(line, file=sys.stderr, flush=True))
    print(format_text(result))
    if args.report:
        with os_errors("write the --report file"):
            write_report(result, args.report)
    return 0 if result.ok else 1
