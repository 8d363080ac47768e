"""The Python API: read an IR, convert it, write it."""
from __future__ import annotations

import os
from pathlib import Path

import onnx

from .ir.graph import Graph
from .ir.reader import load_ir
from .lowering.convert import Converted, convert_graph
from .writer import save

__all__ = ["load_ir", "convert", "convert_file", "convert_graph", "Converted"]


def _graph(model: str | os.PathLike | Graph, weights) -> Graph:
    return model if isinstance(model, Graph) else load_ir(model, weights)


def convert(model: str | os.PathLike | Graph, weights: str | os.PathLike | None = None, *,
            opset: int | None = None) -> onnx.ModelProto:
    """Convert an IR model (path to the .xml, or a loaded Graph) into an in-memory ModelProto.

    ``opset=None`` converts at the lowest opset >= 17 that every layer needs (the model's
    ``opset_import`` says which); a given opset is forced, and layers that need more are refused.
    Raises :class:`ir2onnx.errors.Ir2OnnxError` (with a message naming the layer) for invalid or
    unsupported models. For models of hundreds of MiB prefer :func:`convert_file`, which never
    holds the weights in memory.
    """
    return convert_graph(_graph(model, weights), opset).to_model_proto()


def convert_file(model: str | os.PathLike | Graph, output: str | os.PathLike | None = None,
                 weights: str | os.PathLike | None = None, *, opset: int | None = None,
                 external_data: bool | None = None) -> Path:
    """Convert an IR model and write it to ``output`` (default: the .xml's stem + ``.onnx``).

    The file is checked with ``onnx.checker`` (full_check) and written atomically.
    ``external_data=None`` writes ``OUTPUT.data`` only for models over 2 GiB.
    """
    graph = _graph(model, weights)
    if output is None:
        output = Path(graph.xml_path).with_suffix(".onnx")
    return save(convert_graph(graph, opset), output, external_data=external_data)
