"""``convert OV_DIR --optimum OUT_DIR`` and ``convert WHISPER_DIR --genai OUT_DIR``: an
optimum-intel folder in, a folder out (:mod:`ir2onnx.llm.optimum`, :mod:`ir2onnx.llm.genai_seq2seq`)."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from ..errors import Ir2OnnxError
from ..llm import genai_seq2seq, optimum
from .paths import os_errors


def is_seq2seq_ir_folder(arg: str) -> bool:
    """An optimum-intel encoder-decoder IR folder (Whisper)."""
    folder = Path(arg)
    return folder.is_dir() and all((folder / f).is_file() for f in
                                   ("openvino_encoder_model.xml", "openvino_decoder_model.xml"))


def convert_folder(args, genai: bool = False) -> int:
    """``convert OV_DIR --optimum OUT_DIR``: an optimum-intel folder as optimum-onnx's folder;
    with ``genai``, ``convert OV_DIR --genai OUT_DIR`` on a Whisper-style folder
    (:mod:`ir2onnx.llm.genai_seq2seq`)."""
    start = time.perf_counter()
    option, target = ("--genai", args.genai) if genai else ("--optimum", args.optimum)
    write_folder = genai_seq2seq.write_folder if genai else optimum.write_folder
    if len(args.model) != 1:
        raise Ir2OnnxError(f"{option} converts one optimum-intel folder: give one MODEL")
    given = [opt for opt, on in (("-o", args.output), ("--genai", args.genai and not genai),
                                 ("-w", args.weights), ("--rename", args.rename), ("--shape", args.shape),
                                 ("--accuracy-level", args.accuracy_level is not None)) if on]
    if given:
        raise Ir2OnnxError(f"{option} writes a folder of its own names: {given[0]} cannot go with it")
    if args.precision != "f32":
        raise Ir2OnnxError(f"{option} writes f32 computation: --precision cannot go with it")
    summary: list[str] = []
    with os_errors(f"write '{target}'", name_file=False):
        folder = write_folder(args.model[0], target, opset=args.opset, verify=not args.no_verify,
                              external_data=True if args.external_data else None,
                              quantized=args.quantized, compressed_weights=args.compressed_weights,
                              summary=summary)
    if not args.quiet:
        for line in summary:
            print(f"ir2onnx: {line}", file=sys.stderr)
        print(f"wrote {folder} for {'onnxruntime-genai' if genai else 'optimum-onnx'} in "
              f"{time.perf_counter() - start:.2f} s", file=sys.stderr)
    return 0
