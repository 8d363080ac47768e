"""The Python API: read an IR, convert it, write it."""
from __future__ import annotations

import os
from pathlib import Path

import onnx

from .ir.graph import Graph
from .ir.in_memory import graph_of_openvino_model, is_openvino_model
from .ir.reader import load_ir
from .llm.interface import document
from .lowering.convert import Converted, convert_graph
from .rename import rename_io
from .verify import check_timeout, verify_model
from .writer import save

__all__ = ["load_ir", "read_model", "convert", "convert_file", "convert_graph", "Converted"]


def read_model(model, weights: str | os.PathLike | None = None, *, onnx_too: bool = False) -> Graph | None:
    """The one place a model argument is told apart: a loaded Graph for a path to an IR .xml, a
    Graph, or an in-memory ``openvino.Model``. With ``onnx_too``, None for an ONNX model (a
    ``ModelProto``, or a path that does not end in ``.xml``), which the caller runs as it is."""
    if isinstance(model, Graph):
        return model
    if is_openvino_model(model):
        return graph_of_openvino_model(model)
    if isinstance(model, (str, os.PathLike)):
        if onnx_too and Path(model).suffix.lower() != ".xml":
            return None
        return load_ir(model, weights)
    if onnx_too and hasattr(model, "SerializeToString"):
        return None
    raise TypeError(f"expected a path to an IR .xml, an ir2onnx Graph or an openvino.Model, "
                    f"got {type(model).__name__}")


def _lowered(graph: Graph, *, opset, quantized, compressed_weights, rename, precision, shapes=None,
             target="onnxruntime", ir_version=None) -> Converted:
    conv = convert_graph(graph, opset, quantized=quantized, compressed_weights=compressed_weights,
                         precision=precision, shapes=shapes, target=target, ir_version=ir_version)
    if rename:
        rename_io(conv.model, dict(rename), [t.name for t in conv.tensors])
    return conv


def convert(model, weights: str | os.PathLike | None = None, *,
            opset: int | None = None, verify: bool = True, quantized: str | None = None,
            compressed_weights: str = "dequantize", rename: dict[str, str] | None = None,
            precision: str = "f32", shapes: dict[str, tuple[int, ...]] | None = None,
            verify_timeout: float | None = None, target: str = "onnxruntime",
            ir_version: int | None = None) -> onnx.ModelProto:
    """Convert an IR model (path to the .xml, a loaded Graph, or an in-memory ``openvino.Model``
    as ``openvino.convert_model`` returns it) into an in-memory ModelProto.

    ``opset=None`` converts at the lowest opset >= 17 that every layer needs or asks for (the model's
    ``opset_import`` says which); a given opset is forced, and layers that need more are refused.
    Raises :class:`ir2onnx.errors.Ir2OnnxError` (with a message naming the layer) for invalid or
    unsupported models. ``verify`` creates an onnxruntime CPU session for the result and runs it
    once on generated inputs, so a node onnxruntime has no kernel for, or one its default graph
    optimizations fuse into a node that fails to run, is refused here, naming its layer
    (:mod:`ir2onnx.verify`). The run is ended after ``verify_timeout`` seconds (None: a default
    that grows with the model, 3 s for a small one); a run that times out, or fails for the
    generated values' sake, leaves the model verified by the session only, with one warning.
    An LLM's KV cache inputs are documented in ``metadata_props`` (:func:`ir2onnx.llm.interface.document`).
    For models of hundreds of MiB prefer :func:`convert_file`, which never holds the weights in
    memory.

    ``target``: where the file will run (docs/targets.md): ``"onnxruntime"`` (the default: forms
    its CPU provider fuses), ``"onnx"`` (the standard domain at the lowest opset and IR version
    the model needs), ``"web"`` (onnxruntime-web) or ``"tensorrt"`` (TensorRT's ONNX parser);
    ``ir_version`` pins the ONNX IR version (``opset`` pins the opset) for older runtimes.

    ``quantized``: FakeQuantize layers as exact float emulation (``"exact"``, the default of the
    ``onnxruntime`` and ``web`` targets; None: the target's) or,
    where they are 8-bit affine quantizations, as QuantizeLinear -> DequantizeLinear (``"qdq"``;
    ``"qdq-symmetric"``: int8 with zero point 0 only). ``compressed_weights``: OpenVINO's
    integer-compressed weights kept packed behind a DequantizeLinear (``"dequantize"``, the
    default) or unpacked to floats (``"unpack"``). ``rename={old: new}`` renames inputs and
    outputs (:mod:`ir2onnx.rename`).

    ``precision``: the compute type of float activations (:mod:`ir2onnx.lowering.precision`):
    ``"f32"`` (the default: FP16 IRs computed in f32 as OpenVINO's CPU plugin does, f16 weights
    kept f16 in the file; IR v10 f16 inputs and outputs become f32), ``"f16"`` (for CUDA and
    TensorRT; normalisations, reductions, Softmax, Exp ... stay f32) or ``"ir"`` (the literal types).

    ``shapes``: ``{input name: dims}`` fixes those inputs' dims (for a model deployed at one
    shape): the dims propagate through the graph and its shape arithmetic folds to constants
    (:mod:`ir2onnx.lowering.fixed_shapes`). An unknown name, another rank or a dim that
    contradicts a static one raises Ir2OnnxError.
    """
    check_timeout(verify_timeout)
    graph = read_model(model, weights)
    conv = _lowered(graph, opset=opset, quantized=quantized, compressed_weights=compressed_weights,
                    rename=rename, precision=precision, shapes=shapes, target=target, ir_version=ir_version)
    document(graph, conv.model)
    proto = conv.to_model_proto()
    if verify and proto.ByteSize() < 2**31 - 1:  # beyond, protobuf cannot serialize it (convert_file can)
        verify_model(proto.SerializeToString(), conv.node_layers, conv.opset, timeout=verify_timeout)
    return proto


def convert_file(model, output: str | os.PathLike | None = None,
                 weights: str | os.PathLike | None = None, *, opset: int | None = None,
                 external_data: bool | None = None, verify: bool = True, quantized: str | None = None,
                 compressed_weights: str = "dequantize", summary: list | None = None,
                 rename: dict[str, str] | None = None, precision: str = "f32",
                 shapes: dict[str, tuple[int, ...]] | None = None,
                 verify_timeout: float | None = None, target: str = "onnxruntime",
                 ir_version: int | None = None) -> Path:
    """Convert an IR model and write it to ``output`` (default: the .xml's stem + ``.onnx``).

    The file is checked with ``onnx.checker`` (full_check), verified by creating an onnxruntime
    CPU session for it and running it once (``verify=False`` skips that, for very large models) and written
    atomically: on any error nothing is written. ``external_data=None`` writes ``OUTPUT.data``
    only for models over 2 GiB. ``quantized``, ``compressed_weights``, ``rename``, ``precision``,
    ``shapes``, ``verify_timeout``, ``target`` and ``ir_version`` as in :func:`convert`;
    the lines saying how many layers took the INT8 forms are appended to ``summary`` when given.
    ``model`` may be an in-memory ``openvino.Model``; ``output`` is then required.
    """
    graph = read_model(model, weights)
    if output is None:
        if getattr(graph, "in_memory", False):
            raise TypeError("convert_file of an in-memory openvino.Model needs an output path")
        output = Path(graph.xml_path).with_suffix(".onnx")
    return write(graph, output, opset=opset, external_data=external_data, verify=verify,
                 quantized=quantized, compressed_weights=compressed_weights, summary=summary,
                 rename=rename, precision=precision, shapes=shapes, verify_timeout=verify_timeout,
                 target=target, ir_version=ir_version)[0]


def write(graph: Graph, output: str | os.PathLike, *, opset: int | None = None,
          external_data: bool | None = None, verify: bool = True, quantized: str | None = None,
          compressed_weights: str = "dequantize", summary: list | None = None,
          rename: dict[str, str] | None = None, precision: str = "f32",
          shapes: dict[str, tuple[int, ...]] | None = None,
          verify_timeout: float | None = None, target: str = "onnxruntime",
          ir_version: int | None = None) -> tuple[Path, Converted]:
    """:func:`convert_file` for a loaded graph, returning the written path and the
    :class:`Converted` model too (its ``opset`` and ``summary``: the CLI prints them)."""
    check_timeout(verify_timeout)
    conv = _lowered(graph, opset=opset, quantized=quantized, compressed_weights=compressed_weights,
                    rename=rename, precision=precision, shapes=shapes, target=target, ir_version=ir_version)
    document(graph, conv.model)
    if summary is not None:
        summary.extend(conv.summary)
    check = (lambda path: verify_model(path, conv.node_layers, conv.opset, timeout=verify_timeout)) if verify else None
    reads = (graph.xml_path, graph.bin_path)  # never replaced by the output or its .data file
    return save(conv, output, external_data=external_data, verify=check, reads=reads), conv
