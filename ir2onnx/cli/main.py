"""The ``ir2onnx`` command: convert, run, ops here; check (:mod:`ir2onnx.cli.check`) and selftest
(:mod:`ir2onnx.cli.selftest`) beside it."""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
import zipfile
from pathlib import Path

import numpy as np

from ..api import convert_file, load_ir, write
from ..errors import Ir2OnnxError
from ..inference import run_model
from ..llm.decode import run_llm
from ..llm.genai import write_folder
from ..llm.interface import is_llm, load_interface
from ..llm.seq2seq import is_folder, run_folder
from ..rename import parse_renames
from ..runtime import sessions as runtime
from ..runtime.input_values import nonfinite
from ..runtime.stateful import variables
from ..support import op_details, ops_lines, support_table
from ..verify import check_timeout
from ..version import __version__
from ..writer import atomic_file, hold_signal, refuse_target, remove_own_temps, temporary_folder
from . import check as check_command, selftest as selftest_command
from .batch import is_batch, jobs_for, note_left_out, run_batch, table
from .feeds import add_feed_args, add_precision_arg, add_target_arg, parse_feeds, parse_shapes
from .folders import convert_folder, is_seq2seq_ir_folder
from .paths import lookable, model_xml, onnx_output, os_errors, writable
from .summary import file_bytes, size_text, summary_lines

EXIT_BAD_INPUT = 2
PRECISION_SAYS = {"f32": "floats computed in f32", "f16": "floats computed in f16 (some layers f32)",
                  "ir": "floats in the IR's types"}


def _add_convert(sub) -> None:
    p = sub.add_parser(
        "convert", help="convert an IR model to ONNX",
        description="Convert an OpenVINO IR model (model.xml + model.bin) to ONNX. The output is "
                    "checked with onnx.checker (full_check), verified by creating an onnxruntime "
                    "CPU session (a node onnxruntime has no kernel for is refused, naming its "
                    "layer) and written atomically: on any error nothing is written. Given several "
                    "models (files, directories, globs), converts each (in parallel with --jobs) and "
                    "ends with a table; exit 0 when all converted, 2 when any failed; Ctrl-C stops "
                    "the workers, prints the table so far and exits 130.",
        epilog="example:\n  ir2onnx convert model.xml -o model.onnx --opset 17\n"
               "  ir2onnx convert model.xml -o out/ --rename Result_505=logits\n"
               "  ir2onnx convert model.xml -w weights.bin --external-data\n"
               "  ir2onnx convert models/ 'more/*.xml' -o onnx_out/ --jobs 4",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", nargs="+", metavar="MODEL",
                   help="the IR .xml file; or a directory (every .xml under it), a glob, several of them")
    p.add_argument("-w", "--weights", help="the .bin file (default: the .xml's stem + .bin)")
    p.add_argument("-o", "--output", help="the .onnx file to write (default: beside the .xml); an "
                   "existing directory or a path ending in '/' means DIR/<stem>.onnx (and is the "
                   "output directory of several models)")
    p.add_argument("--opset", type=int, default=None, help="force this ONNX opset (default: the lowest >= 17 that every layer needs, or asks for a faster form (per-channel compressed MatMul weights: 21), at most what onnxruntime loads; other --target: the lowest >= 14)")
    p.add_argument("--ir-version", type=int, default=None, metavar="N",
                   help="pin the ONNX IR version (default: the lowest the opset needs), for runtimes "
                        "that load only older ones; with --opset for a lower opset")
    add_target_arg(p)
    p.add_argument("--quantized", choices=["exact", "qdq", "qdq-symmetric"], default=None,
                   help="FakeQuantize: exact float emulation (default of the onnxruntime and web "
                        "targets), or QuantizeLinear -> DequantizeLinear where it is an 8-bit affine "
                        "quantization (qdq: default of --target onnx; qdq-symmetric: int8 with zero "
                        "point 0 only, default of --target tensorrt)")
    p.add_argument("--compressed-weights", choices=["dequantize", "unpack"], default="dequantize",
                   help="integer-compressed weights (u8/i8/u4/i4 Const -> Convert -> Subtract -> "
                        "Multiply): kept packed behind a DequantizeLinear (default) or unpacked")
    add_precision_arg(p)
    p.add_argument("--external-data", action="store_true",
                   help="write weights to OUTPUT.data (automatic for models over 2 GiB)")
    p.add_argument("--no-verify", action="store_true",
                   help="do not verify the file by creating an onnxruntime CPU session and "
                        "running it once on generated inputs (for very large models: the session "
                        "loads every weight)")
    p.add_argument("--verify-timeout", type=float, default=None, metavar="SECONDS",
                   help="end the verifying inference after SECONDS (default: 3 s plus 30 s per GiB "
                        "of the model, at most 600); a model whose run is ended is written with a "
                        "warning, verified by onnx.checker and the session only")
    p.add_argument("--shape", action="append", default=[], metavar="NAME=DIMS",
                   help="fix the dims of input NAME, e.g. x=1,3,224,224 (repeatable; for a model "
                        "deployed at one shape: the dims propagate and shape arithmetic folds)")
    p.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                   help="rename a model input or output (repeatable)")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                   help="convert several models in N processes at once (default 1)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print nothing but errors (no summary of the written model)")
    p.add_argument("--genai", metavar="OUT_DIR",
                   help="an LLM IR: write a folder onnxruntime-genai runs instead of one .onnx "
                        "(model.onnx with genai's names, no beam_idx, genai_config.json, the "
                        "tokenizer files of the IR's folder; docs/llm.md); an optimum-intel Whisper "
                        "folder: encoder.onnx (with the cross-attention cache), decoder.onnx, "
                        "genai_config.json of type whisper (docs/optimum.md)")
    p.add_argument("--optimum", metavar="OUT_DIR",
                   help="MODEL is an optimum-intel folder (openvino_model.xml, or "
                        "openvino_encoder_model.xml + openvino_decoder_model.xml): write the folder "
                        "optimum-onnx's ORTModelFor*.from_pretrained loads (model.onnx, or "
                        "encoder_model.onnx + decoder_model_merged.onnx; "
                        "past_key_values.N.* inputs, present.N.* outputs; the config and tokenizer "
                        "files; docs/optimum.md)")
    p.add_argument("--accuracy-level", type=int, choices=(0, 4), default=None,
                   help="with --genai, how onnxruntime's MatMulNBits computes compressed weights: 4 "
                        "(default, onnxruntime's own: activations quantized to int8 per block, as "
                        "OpenVINO's CPU plugin does by default) or 0 (f32 activations: OpenVINO's "
                        "exact results, 5-20x slower per token)")
    p.add_argument("--genai-provider", choices=("cpu", "cuda", "dml", "webgpu"), default=None,
                   help="with --genai, the onnxruntime execution provider genai runs the folder on "
                        "(its provider_options in genai_config.json): cpu (default) and webgpu get "
                        "GroupQueryAttention with the KV cache written in place; cuda and dml, whose "
                        "GroupQueryAttention takes f16 only, the decomposed attention (docs/llm.md)")
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
    p.add_argument("model", help="a .onnx file, an IR .xml file, or an encoder-decoder folder "
                   "(docs/optimum.md)")
    p.add_argument("-w", "--weights", help="the .bin file of an IR model")
    add_feed_args(p)
    p.add_argument("--provider", choices=["cpu", "cuda", "openvino"], default="cpu",
                   help="onnxruntime execution provider (default cpu; openvino: onnxruntime-openvino's "
                        "OpenVINO provider on its CPU device, docs/providers.md)")
    add_precision_arg(p)
    add_target_arg(p)
    p.add_argument("--save", metavar="OUT.npz", help="save the outputs to a .npz file")
    p.add_argument("--steps", type=int, default=4, metavar="N",
                   help="steps of a stateful model (ReadValue/Assign): the first is fed the "
                        "variables' init values, each next one the previous step's "
                        "<variable_id>.new (default 4). An LLM (input_ids and a KV cache, "
                        "IR or converted .onnx) decodes N greedy tokens from the prompt "
                        "(--input input_ids=FILE.npy, else random of --shape input_ids=B,N, "
                        "default 1,8) and prints them; so does an encoder-decoder folder "
                        "(--optimum's, or the optimum-intel IR folder: Whisper) from config.json's "
                        "decoder_start_token_id")
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
    p.add_argument("--markdown", action="store_true", help="print the support table (docs/operations.md)")
    p.set_defaults(func=cmd_ops)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ir2onnx",
        description="Convert OpenVINO IR models to ONNX, run them on onnxruntime, and check that "
                    "the two agree. Exit codes: 0 success, 1 outputs disagree (check), "
                    "2 bad input or unsupported model, 130/143 stopped by Ctrl-C/SIGTERM "
                    "(temporary files removed). Outputs are written atomically and never over "
                    "an input, a FIFO or a device.",
        epilog="examples:\n  ir2onnx convert model.xml -o model.onnx\n  ir2onnx run model.onnx\n"
               "  ir2onnx ops",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ir2onnx {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    _add_convert(sub)
    _add_run(sub)
    _add_ops(sub)
    check_command.add_command(sub)
    selftest_command.add_command(sub)
    return parser


def cmd_convert(args) -> int:
    check_timeout(args.verify_timeout)
    if args.optimum:
        return convert_folder(args)
    if args.genai and len(args.model) == 1 and is_seq2seq_ir_folder(args.model[0]):
        return convert_folder(args, genai=True)
    if is_batch(args.model):
        return _convert_many(args)

    start = time.perf_counter()
    if args.genai_provider is not None and not args.genai:
        raise Ir2OnnxError("--genai-provider applies to --genai folders")
    if args.accuracy_level is not None and not args.genai:
        raise Ir2OnnxError("--accuracy-level applies to --genai folders (a plain model's level is the "
                           "session's: session.qdq_matmulnbits_accuracy_level, onnxruntime's default 4)")
    rename = parse_renames(args.rename)
    xml = model_xml(args.model[0])
    out = onnx_output(xml, args.output, args.weights, external_data=args.external_data)
    with os_errors("read"):
        graph = load_ir(xml, args.weights)
    summary: list[str] = []
    if args.genai:
        if args.target != "onnxruntime" or args.ir_version is not None:
            raise Ir2OnnxError("--genai writes a folder for onnxruntime-genai: it takes neither --target "
                               "nor --ir-version")
        if args.output:
            raise Ir2OnnxError("--genai writes a folder: give -o or --genai, not both")
        with os_errors(f"write '{args.genai}'", name_file=False):
            folder = write_folder(graph, args.genai, opset=args.opset, verify=not args.no_verify,
                                  external_data=True if args.external_data else None,
                                  quantized=args.quantized, compressed_weights=args.compressed_weights,
                                  summary=summary,
                                  accuracy_level=4 if args.accuracy_level is None else args.accuracy_level,
                                  provider=args.genai_provider or "cpu")
        for line in summary:
            print(f"ir2onnx: {line}", file=sys.stderr)
        print(f"wrote {folder} for onnxruntime-genai in {time.perf_counter() - start:.2f} s", file=sys.stderr)
        return 0
    with os_errors(f"write '{out}'", name_file=False):
        _, converted = write(graph, out, opset=args.opset, external_data=True if args.external_data else None,
                             verify=not args.no_verify, verify_timeout=args.verify_timeout,
                             quantized=args.quantized,
                             compressed_weights=args.compressed_weights, summary=summary, rename=rename,
                             precision=args.precision, shapes=parse_shapes(args.shape),
                             target=args.target, ir_version=args.ir_version)
    if args.quiet:
        return 0
    for line in summary + summary_lines(converted.model, converted.tensors):
        print(f"ir2onnx: {line}", file=sys.stderr)
    lowest = "the lowest >= 17 every layer needs" if args.target == "onnxruntime" else "the lowest every layer needs"
    how = "forced by --opset" if args.opset is not None else lowest
    print(f"wrote {out} ({size_text(file_bytes(out))}, ONNX opset {converted.opset}, {how}, IR version "
          f"{converted.model.ir_version}, target {args.target}; "
          f"{PRECISION_SAYS[args.precision]}) in {time.perf_counter() - start:.2f} s", file=sys.stderr)
    state = variables(graph)
    if state:
        print(f"stateful model: feed the state input(s) {', '.join(state)} (first step: their "
              f"ReadValue init values, e.g. zeros with a 0-length sequence axis), then each "
              f"step's <name>.new", file=sys.stderr)

        if is_llm(graph):
            print("LLM: the KV cache inputs are documented in metadata_props (ir2onnx.state.*); "
                  "`ir2onnx run --steps N` decodes, `--genai DIR` writes an onnxruntime-genai "
                  "folder (docs/llm.md)", file=sys.stderr)
    return 0


def _convert_many(args) -> int:
    """Several models: each converted on its own, then one table; exit 2 when any failed."""
    if args.weights:
        raise Ir2OnnxError("-w/--weights names the .bin of one model: it cannot go with several")
    if args.jobs < 1:
        raise Ir2OnnxError(f"--jobs must be at least 1, got {args.jobs}")
    if args.genai:
        raise Ir2OnnxError("--genai writes one model's folder: give one model")
    if args.accuracy_level is not None:
        raise Ir2OnnxError("--accuracy-level applies to --genai folders (one model)")
    jobs = jobs_for(args.model, args.output)
    if not args.quiet:
        note_left_out(args.model)
    options = dict(opset=args.opset, external_data=True if args.external_data else None,
                   verify=not args.no_verify, verify_timeout=args.verify_timeout, quantized=args.quantized,
                   compressed_weights=args.compressed_weights, rename=parse_renames(args.rename),
                   precision=args.precision, shapes=parse_shapes(args.shape), target=args.target,
                   ir_version=args.ir_version)
    outcomes, stopped = run_batch(jobs, options, args.jobs, progress=None if args.quiet else sys.stderr)
    print(table(outcomes), flush=True)
    if stopped is not None:
        raise stopped
    return 0 if all(o.status == "ok" for o in outcomes) else EXIT_BAD_INPUT


def _summary(name: str, value: np.ndarray) -> str:
    head = f"{name}: shape {list(value.shape)} {value.dtype}"
    if value.size == 0:
        return head + " (empty)"
    flat = value.reshape(-1)
    if value.dtype.kind in "fiub" and value.dtype != np.bool_:
        f = flat.astype(np.float64)
        head += f"  min {f.min():.6g} max {f.max():.6g} mean {f.mean():.6g}"
    return head + "\n  " + np.array2string(flat[:8], separator=", ") + (" ..." if flat.size > 8 else "")


def _run_llm(model, given: dict, shapes: dict, args) -> int | None:
    """``run`` on an LLM (an IR, or a converted .onnx with its cache documented): greedy decoding
    of ``--steps`` tokens (:mod:`ir2onnx.llm.decode`); None for any other model."""
    path = Path(model)
    if path.suffix.lower() not in (".xml", ".onnx") or not path.is_file():
        return None
    with temporary_folder("ir2onnx-") as tmp:
        if path.suffix.lower() == ".xml":
            graph = load_ir(path, args.weights)
            if not is_llm(graph):
                return None
            path = convert_file(graph, Path(tmp) / "model.onnx", precision=args.precision, target=args.target)
        iface = load_interface(path)
        if iface is None:
            return None

        return run_llm(runtime.session(path, args.provider), iface, given, shapes, args)


def cmd_run(args) -> int:
    given, shapes = parse_feeds(args)
    save = None
    if args.save:  # checked before running: a bad path must not cost the run
        if Path(args.save).is_dir():
            raise Ir2OnnxError(f"--save '{args.save}' is a directory: give a file name such as OUT.npz")
        save = args.save if args.save.endswith(".npz") else args.save + ".npz"  # as np.savez names it
        writable(Path(save), "--save file")
        refuse_target(save, "--save file", (args.model, args.weights))
    model = args.model

    if is_folder(model):  # an encoder-decoder folder (Whisper): greedy decoding of --steps tokens
        with os_errors("read"):
            return run_folder(model, given, shapes, args)
    if Path(model).is_dir() or Path(model).suffix.lower() == ".bin":
        model = model_xml(model)
    if args.target != "onnxruntime" and Path(model).suffix.lower() == ".onnx":
        raise Ir2OnnxError(f"--target {args.target} chooses how an IR is converted: '{model}' is ONNX already")
    with os_errors("read"):
        llm = _run_llm(model, given, shapes, args)
    if llm is not None:
        return llm
    with os_errors("read"):
        result = run_model(model, given, weights=args.weights, shapes=shapes, seed=args.seed,
                           provider=args.provider, steps=args.steps,
                           precision=args.precision, target=args.target)
    if result.examples:
        print(f"ir2onnx: input(s) {', '.join(result.examples)} from the example inputs {result.example_file}",
              file=sys.stderr)
    for name, value in result.inputs.items():
        print(_summary(f"input {name}", value))
    for name, value in result.outputs.items():
        print(_summary(f"output {name}", value))
    for name, what in nonfinite(result.outputs).items():
        print(f"ir2onnx: warning: output '{name}' holds {what} elements"
              + ("" if given or result.examples else " (the inputs were generated: give real ones with --input)"),
              file=sys.stderr)
    if save:
        with os_errors("write the --save file"):
            save_npz(save, result.outputs)
        print(f"saved {len(result.outputs)} output(s) to {save}", file=sys.stderr)
    return 0


def save_npz(path: str | os.PathLike, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as a .npz (``np.load(path)[name]``) atomically: a zip of ``<name>.npy``
    members written beside ``path`` and renamed over it. Any output name works (``file``, names
    with '/'), as long as the zip format can hold it (65535 bytes)."""
    for name in arrays:
        if len((name + ".npy").encode("utf-8", "surrogatepass")) > 0xFFFF:
            raise Ir2OnnxError(f"the output name '{name[:40]}...' is {len(name)} characters long: a "
                               f".npz member name holds at most 65531 bytes; rename it (convert --rename)")
    with atomic_file(path, "wb", what="--save file") as f:
        with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
            for name, value in arrays.items():
                with z.open(name + ".npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)


def cmd_ops(args) -> int:
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


# the signals that end a command cleanly (SIGHUP: the terminal closed; Windows has no SIGHUP)
STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the program is, so that every ``finally`` and ``with``
    removes its temporary files, as Ctrl-C (KeyboardInterrupt) does."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum, frame) -> None:
    if hold_signal(signum):  # a temporary is being made: raised again once it is recorded
        return
    # the first signal unwinds the program; the cleanup it runs is not interrupted again
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


@contextlib.contextmanager
def stop_on_signals():
    """SIGINT, SIGTERM and SIGHUP raise an exception in the main thread while the block runs (the
    handlers are put back after it): temporary files are removed on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, _on_signal) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def stopped_code(e: KeyboardInterrupt) -> int:
    """128 + the signal's number, as shells report a process a signal ended: 130 for Ctrl-C."""
    return 128 + (e.signum if isinstance(e, Terminated) else signal.SIGINT)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    with stop_on_signals():  # held while the errors are reported: a second Ctrl-C is ignored then
        try:
            lookable(getattr(args, "model", None), getattr(args, "weights", None))
            return args.func(args)
        except Ir2OnnxError as e:
            print(f"ir2onnx: error: {' '.join(str(e).split())}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except KeyboardInterrupt as e:
            remove_own_temps()
            name = signal.Signals(e.signum).name if isinstance(e, Terminated) else "Ctrl-C"
            print(f"ir2onnx: interrupted ({name}); temporary files removed", file=sys.stderr)
            return stopped_code(e)
        except Exception as e:  # a bug in ir2onnx: say so in one line unless debugging
            if os.environ.get("IR2ONNX_DEBUG"):
                raise
            print(f"ir2onnx: internal error ({type(e).__name__}: {e}); set IR2ONNX_DEBUG=1 for a "
                  f"traceback and please report it", file=sys.stderr)
            return 3


if __name__ == "__main__":
    sys.exit(main())
