"""The Python API: read an IR, convert it, write it."""
from __future__ import annotations

import os
from pathlib import Path

import onnx

from .ir.graph import Graph
from .ir.reader import load_ir
from .lowering.convert import Converted, convert_graph
from .verify import verify_model
from .writer import save

__all__ = ["load_ir", "convert", "convert_file", "convert_graph", "Converted"]


def _graph(model: str | os.PathLike | Graph, weights) -> Graph:
    return model if isinstance(model, Graph) else load_ir(model, weights)


def convert(model: str | os.PathLike | Graph, weights: str | os.PathLike | None = None, *,
            opset: int | None = None, verify: bool = True, quantized: str = "exact",
            compressed_weights: str = "dequantize") -> onnx.ModelProto:
    """Convert an IR model (path to the .xml, or a loaded Graph) into an in-memory ModelProto.

    ``opset=None`` converts at the lowest opset >= 17 that every layer needs (the model's
    ``opset_import`` says which); a given opset is forced, and layers that need more are refused.
    Raises :class:`ir2onnx.errors.Ir2OnnxError` (with a message naming the layer) for invalid or
    unsupported models. ``verify`` creates an onnxruntime CPU session for the result and runs it
    once on generated inputs, so a node onnxruntime has no kernel for, or one its default graph
    optimizations fuse into a node that fails to run, is refused here, naming its layer
    (:mod:`ir2onnx.verify`).
    For models of hundreds of MiB prefer :func:`convert_file`, which never holds the weights in
    memory.

    ``quantized``: FakeQuantize layers as exact float emulation (``"exact"``, the default) or,
    where they are 8-bit affine quantizations, as QuantizeLinear -> DequantizeLinear (``"qdq"``;
    ``"qdq-symmetric"``: int8 with zero point 0 only). ``compressed_weights``: OpenVINO's
    integer-compressed weights kept packed behind a DequantizeLinear (``"dequantize"``, the
    default) or unpacked to floats (``"unpack"``).
    """
    conv = convert_graph(_graph(model, weights), opset, quantized=quantized,
                         compressed_weights=compressed_weights)
    proto = conv.to_model_proto()
    if verify and proto.ByteSize() < 2**31 - 1:  # beyond, protobuf cannot serialize it (convert_file can)
        verify_model(proto.SerializeToString(), conv.node_layers, conv.opset)
    return proto


def convert_file(model: str | os.PathLike | Graph, output: str | os.PathLike | None = None,
                 weights: str | os.PathLike | None = None, *, opset: int | None = None,
                 external_data: bool | None = None, verify: bool = True, quantized: str = "exact",
                 compressed_weights: str = "dequantize", summary: list | None = None) -> Path:
    """Convert an IR model and write it to ``output`` (default: the .xml's stem + ``.onnx``).

    The file is checked with ``onnx.checker`` (full_check), verified by creating an onnxruntime
    CPU session for it and running it once (``verify=False`` skips that, for very large models) and written
    atomically: on any error nothing is written. ``external_data=None`` writes ``OUTPUT.data``
    only for models over 2 GiB. ``quantized`` and ``compressed_weights`` as in :func:`convert`;
    the lines saying how many layers took the INT8 forms are appended to ``summary`` when given.
    """
    graph = _graph(model, weights)
    if output is None:
        output = Path(graph.xml_path).with_suffix(".onnx")
    return write(graph, output, opset=opset, external_data=external_data, verify=verify,
                 quantized=quantized, compressed_weights=compressed_weights, summary=summary)[0]


def write(graph: Graph, output: str | os.PathLike, *, opset: int | None = None,
          external_data: bool | None = None, verify: bool = True, quantized: str = "exact",
          compressed_weights: str = "dequantize", summary: list | None = None) -> tuple[Path, Converted]:
    """:func:`convert_file` for a loaded graph, returning the written path and the
    :class:`Converted` model too (its ``opset`` and ``summary``: the CLI prints them)."""
    conv = convert_graph(graph, opset, quantized=quantized, compressed_weights=compressed_weights)
    if summary is not None:
        summary.extend(conv.summary)
    check = (lambda path: verify_model(path, conv.node_layers, conv.opset)) if verify else None
    return save(conv, output, external_data=external_data, verify=check), conv
