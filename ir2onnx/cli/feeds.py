"""The ``--input``/``--shape``/``--seed`` options of ``ir2onnx run`` and ``ir2onnx check`` (and
``--precision``, which ``convert`` takes too), defined once: :mod:`ir2onnx.cli.main` and :mod:`ir2onnx.harness.check` both import them, so neither imports the other."""
from __future__ import annotations

import numpy as np

from ..errors import Ir2OnnxError
from ..lowering.targets import DEFAULT, TARGETS
from ..runtime.array_files import read_npy
from ..runtime.sessions import parse_dims_arg


def add_feed_args(p) -> None:
    """Add ``--input NAME=FILE.npy``, ``--shape NAME=DIMS`` and ``--seed N`` to ``p``."""
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="feed input NAME from a .npy file (repeatable)")
    p.add_argument("--shape", action="append", default=[], metavar="NAME=DIMS",
                   help="shape of a generated input, e.g. x=1,3,224,224 (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="seed of generated inputs (default 0)")


def parse_feeds(args) -> tuple[dict[str, np.ndarray], dict[str, tuple[int, ...]]]:
    """``--input NAME=FILE.npy`` and ``--shape NAME=DIMS`` into dicts."""
    given = {}
    for item in args.input:
        name, sep, path = item.partition("=")
        if not sep or not name:
            raise Ir2OnnxError(f"--input '{item}': expected NAME=FILE.npy")
        given[name] = read_npy(path, f"--input {name} '{path}'")
    if args.seed < 0:
        raise Ir2OnnxError(f"--seed must be >= 0, got {args.seed}")
    shapes = parse_shapes(args.shape)
    for name in set(given) & set(shapes):  # reconciled when they agree, refused when they do not
        if tuple(given[name].shape) != shapes[name]:
            raise Ir2OnnxError(f"input '{name}' is given by --input (shape {list(given[name].shape)}) "
                               f"and by --shape {name}={','.join(map(str, shapes[name]))}: the file's "
                               f"shape is the input's shape, give one of them")
    return given, shapes


def parse_shapes(items: list[str]) -> dict[str, tuple[int, ...]]:
    """``--shape NAME=DIMS`` items (of ``run``, ``check`` and ``convert``) into a dict."""
    shapes = {}
    for item in items:
        name, sep, dims = item.partition("=")
        if not sep or not name:
            raise Ir2OnnxError(f"--shape '{item}': expected NAME=DIMS such as x=1,3,224,224")
        shapes[name] = parse_dims_arg(dims)
    return shapes


PRECISIONS = ("f32", "f16", "ir")


TARGET_HELP = ("where the ONNX file will run (docs/targets.md): onnxruntime (default: forms its CPU "
               "provider fuses), onnx (the standard domain only, the lowest opset and IR version the "
               "model needs; at --opset 23 Attention, RMSNormalization and RotaryEmbedding), web (onnxruntime-web: "
               "opset <= 21, IR version <= 10, weights within 2 GiB), tensorrt (TensorRT's ONNX parser: "
               "symmetric int8 QDQ, int64 constants within int32, known ranks)")


def add_target_arg(p) -> None:
    """Add ``--target`` (:mod:`ir2onnx.lowering.targets`) to ``p``."""
    p.add_argument("--target", choices=list(TARGETS), default=DEFAULT, help=TARGET_HELP)


def add_precision_arg(p) -> None:
    """Add ``--precision f32|f16|ir`` (:mod:`ir2onnx.lowering.precision`) to ``p``."""
    p.add_argument("--precision", choices=PRECISIONS, default="f32",
                   help="compute precision of floats: f32 (default; FP16 IRs are computed in f32 as "
                        "OpenVINO's CPU plugin does, f16 weights stay f16 in the file), f16 (every "
                        "float activation in f16 except normalisations, reductions, Softmax, Exp "
                        "..., for CUDA/TensorRT), ir (the IR's literal types)")
