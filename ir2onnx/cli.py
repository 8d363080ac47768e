"""The ``ir2onnx`` command: convert, run, ops here; check (:mod:`ir2onnx.harness`) and selftest
(:mod:`ir2onnx.selftest`) register their own subcommands."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .errors import Ir2OnnxError
from .feed_args import add_feed_args, parse_feeds
from .version import __version__

EXIT_BAD_INPUT = 2


def _add_convert(sub) -> None:
    p = sub.add_parser(
        "convert", help="convert an IR model to ONNX",
        description="Convert an OpenVINO IR model (model.xml + model.bin) to ONNX. The output is "
                    "checked with onnx.checker (full_check), verified by creating an onnxruntime "
                    "CPU session (a node onnxruntime has no kernel for is refused, naming its "
                    "layer) and written atomically: on any error nothing is written.",
        epilog="example:\n  ir2onnx convert model.xml -o model.onnx --opset 17\n"
               "  ir2onnx convert model.xml -w weights.bin --external-data",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="the IR .xml file")
    p.add_argument("-w", "--weights", help="the .bin file (default: the .xml's stem + .bin)")
    p.add_argument("-o", "--output", help="the .onnx file to write (default: beside the .xml)")
    p.add_argument("--opset", type=int, default=None, help="force this ONNX opset (default: the lowest >= 17 that every layer needs, at most what onnxruntime loads)")
    p.add_argument("--quantized", choices=["exact", "qdq", "qdq-symmetric"], default="exact",
                   help="FakeQuantize: exact float emulation (default), or QuantizeLinear -> "
                        "DequantizeLinear where it is an 8-bit affine quantization (qdq; "
                        "qdq-symmetric: int8 with zero point 0 only, as TensorRT takes)")
    p.add_argument("--compressed-weights", choices=["dequantize", "unpack"], default="dequantize",
                   help="integer-compressed weights (u8/i8/u4/i4 Const -> Convert -> Subtract -> "
                        "Multiply): kept packed behind a DequantizeLinear (default) or unpacked")
    p.add_argument("--external-data", action="store_true",
                   help="write weights to OUTPUT.data (automatic for models over 2 GiB)")
    p.add_argument("--no-verify", action="store_true",
                   help="do not verify the file by creating an onnxruntime CPU session and "
                        "running it once on generated inputs (for very large models: the session "
                        "loads every weight)")
    p.set_defaults(func=cmd_convert)


def _add_run(sub) -> None:
    p = sub.add_parser(
        "run", help="run a model on onnxruntime",
        description="Run an ONNX model (or an IR model, converted first) on onnxruntime. Inputs "
                    "not given with --input are random (normal floats, small integers), with "
                    "dynamic dims from --shape or 1.",
        epilog="example:\n  ir2onnx run model.onnx --input x=x.npy --save out.npz\n"
               "  ir2onnx run model.xml --shape x=1,3,224,224 --provider cuda",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="a .onnx file, or an IR .xml file")
    p.add_argument("-w", "--weights", help="the .bin file of an IR model")
    add_feed_args(p)
    p.add_argument("--provider", choices=["cpu", "cuda"], default="cpu",
                   help="onnxruntime execution provider (default cpu)")
    p.add_argument("--save", metavar="OUT.npz", help="save the outputs to a .npz file")
    p.add_argument("--steps", type=int, default=4, metavar="N",
                   help="steps of a stateful IR model (ReadValue/Assign): the first is fed the "
                        "variables' init values, each next one the previous step's "
                        "<variable_id>.new (default 4)")
    p.set_defaults(func=cmd_run)


def _add_ops(sub) -> None:
    p = sub.add_parser(
        "ops", help="list the supported IR operations",
        description="List every supported (type, version) pair of IR layers with its inputs: those "
                    "that may be run-time values (computed by the graph, or Parameters) and those "
                    "that must be constants at convert time, with the reason. Given TYPE names, "
                    "show each version of them with its inputs, attributes and the ONNX chain it "
                    "becomes.",
        epilog="example:\n  ir2onnx ops\n  ir2onnx ops DetectionOutput PriorBoxClustered\n  ir2onnx ops --markdown",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("types", nargs="*", metavar="TYPE", help="IR layer types to describe (case-insensitive)")
    p.add_argument("--markdown", action="store_true", help="print the README's support table")
    p.set_defaults(func=cmd_ops)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ir2onnx",
        description="Convert OpenVINO IR models to ONNX, run them on onnxruntime, and check that "
                    "the two agree. Exit codes: 0 success, 1 outputs disagree (check), "
                    "2 bad input or unsupported model.",
        epilog="examples:\n  ir2onnx convert model.xml -o model.onnx\n  ir2onnx run model.onnx\n"
               "  ir2onnx ops",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ir2onnx {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    _add_convert(sub)
    _add_run(sub)
    _add_ops(sub)
    from . import harness, selftest

    harness.add_command(sub)
    selftest.add_command(sub)
    return parser


def cmd_convert(args) -> int:
    from .api import load_ir, write
    from .stateful import variables

    start = time.perf_counter()
    out = Path(args.output) if args.output else Path(args.model).with_suffix(".onnx")
    graph = load_ir(args.model, args.weights)
    summary: list[str] = []
    _, converted = write(graph, out, opset=args.opset, external_data=True if args.external_data else None,
                         verify=not args.no_verify, quantized=args.quantized,
                         compressed_weights=args.compressed_weights, summary=summary)
    for line in summary:
        print(f"ir2onnx: {line}", file=sys.stderr)
    how = "forced by --opset" if args.opset is not None else "the lowest >= 17 every layer needs"
    print(f"wrote {out} (ONNX opset {converted.opset}, {how}) in {time.perf_counter() - start:.2f} s",
          file=sys.stderr)
    state = variables(graph)
    if state:
        print(f"stateful model: feed the state input(s) {', '.join(state)} (first step: their "
              f"ReadValue init values, e.g. zeros with a 0-length sequence axis), then each "
              f"step's <name>.new", file=sys.stderr)
    return 0


def _summary(name: str, value: np.ndarray) -> str:
    head = f"{name}: shape {list(value.shape)} {value.dtype}"
    if value.size == 0:
        return head + " (empty)"
    flat = value.reshape(-1)
    if value.dtype.kind in "fiub" and value.dtype != np.bool_:
        f = flat.astype(np.float64)
        head += f"  min {f.min():.6g} max {f.max():.6g} mean {f.mean():.6g}"
    return head + "\n  " + np.array2string(flat[:8], separator=", ") + (" ..." if flat.size > 8 else "")


def cmd_run(args) -> int:
    from . import runtime

    given, shapes = parse_feeds(args)
    graph, state_vars = None, []
    with tempfile.TemporaryDirectory(prefix="ir2onnx-") as tmp:
        model = Path(args.model)
        if model.suffix.lower() == ".xml":
            from .api import convert_file
            from .ir.reader import load_ir
            from .stateful import variables

            graph = load_ir(model, args.weights)
            state_vars = variables(graph)
            model = convert_file(model, Path(tmp) / (model.stem + ".onnx"), args.weights)
        elif not model.is_file():
            raise Ir2OnnxError(f"model file '{model}' not found")
        try:
            sess = runtime.session(model, args.provider)
        except Ir2OnnxError:
            raise
        except Exception as e:  # onnxruntime's own load errors (not an ONNX file, ...)
            raise Ir2OnnxError(f"onnxruntime cannot load '{model}': {str(e).strip().splitlines()[0]}") from None
        feeds = runtime.make_inputs(sess, given, shapes, seed=args.seed)
        if state_vars:
            from .stateful import initial_state, ort_steps

            if args.steps < 1:
                raise Ir2OnnxError(f"--steps must be at least 1, got {args.steps}")
            feeds = {k: v for k, v in feeds.items() if k not in state_vars}
            outputs = ort_steps(sess, feeds, initial_state(graph, feeds), args.steps)
        else:
            outputs = runtime.run(sess, feeds)
    for name, value in feeds.items():
        print(_summary(f"input {name}", value))
    for name, value in outputs.items():
        print(_summary(f"output {name}", value))
    if args.save:
        np.savez(args.save, **outputs)
        print(f"saved {len(outputs)} output(s) to {args.save}", file=sys.stderr)
    return 0


def cmd_ops(args) -> int:
    from .support import op_details, ops_lines, support_table

    if args.markdown:
        print(support_table())
    elif args.types:
        try:
            print("\n".join(op_details(args.types)))
        except ValueError as e:
            raise Ir2OnnxError(str(e)) from None
    else:
        print("\n".join(ops_lines()))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except Ir2OnnxError as e:
        print(f"ir2onnx: error: {' '.join(str(e).split())}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("ir2onnx: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # a bug in ir2onnx: say so in one line unless debugging
        if os.environ.get("IR2ONNX_DEBUG"):
            raise
        print(f"ir2onnx: internal error ({type(e).__name__}: {e}); set IR2ONNX_DEBUG=1 for a "
              f"traceback and please report it", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
