"""``ir2onnx check``: its options and its main (the check itself is :func:`ir2onnx.harness.check.check`)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import Ir2OnnxError
from ..harness.check import check
from ..harness.oracle_budget import DEFAULT_BUDGET
from ..harness.report import format_text, write_report
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
                    "agreement unless --rtol/--atol are given (docs/check.md). Progress lines go "
                    "to stderr; the oracle is skipped, saying why, above --oracle-budget.",
        epilog="example:\n  ir2onnx check model.xml\n"
               "  ir2onnx check model.xml --shape x=2,3,8,8 --provider all --report check.md",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="the IR .xml file")
    p.add_argument("-w", "--weights", help="the .bin file (default: the .xml's stem + .bin)")
    add_feed_args(p)
    p.add_argument("--provider", choices=["cpu", "cuda", "all"], default="cpu",
                   help="onnxruntime provider(s): all = every available one (default cpu)")
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
                        "about 1-2 minutes on one core; inf: never skip)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--report", metavar="OUT.json|OUT.md", help="also write a JSON or Markdown report")
    p.set_defaults(func=cmd_check)


def cmd_check(args) -> int:
    given, shapes = parse_feeds(args)
    if args.report and Path(args.report).suffix.lower() not in (".json", ".md"):
        raise Ir2OnnxError(f"--report '{args.report}': the name must end in .json or .md")
    if args.report:
        writable(Path(args.report), "--report file")  # before the check, not after it
    with os_errors("read"):
        result = check(model_xml(args.model), args.weights, inputs=given, shapes=shapes,
                       providers=args.provider, rtol=args.rtol, atol=args.atol, seed=args.seed,
                       opset=args.opset, openvino=not args.no_openvino, oracle=not args.no_oracle,
                       isolate_openvino=True, precision=args.precision, oracle_budget=args.oracle_budget,
                       target=args.target, round_trip=args.round_trip,
                       progress=None if args.quiet else lambda line: print(line, file=sys.stderr, flush=True))
    print(format_text(result))
    if args.report:
        with os_errors("write the --report file"):
            Path(args.report).parent.mkdir(parents=True, exist_ok=True)
            write_report(result, args.report)
    return 0 if result.ok else 1
