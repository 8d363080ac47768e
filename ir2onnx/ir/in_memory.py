"""An in-memory ``openvino.Model`` (what ``openvino.convert_model`` returns) as an ir2onnx Graph.

The model is serialized by OpenVINO itself (``openvino.save_model`` with ``compress_to_fp16=False``,
so the weights keep their precision) into a temporary folder and read back like any IR. The folder
lives as long as the Graph (the OpenVINO backend of ``check`` reads the files again) or the
weights file object its Consts read (a converted model copies the weights lazily), and is
removed when both are collected. openvino stays an optional import: it is imported only
here, and only for an object that is already an OpenVINO model.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from ..errors import Ir2OnnxError
from .graph import Graph
from .reader import load_ir


def is_openvino_model(obj) -> bool:
    """True for an ``openvino.Model`` (checked by its type's module, without importing openvino)."""
    cls = type(obj)
    return cls.__module__.split(".")[0] == "openvino" and cls.__name__ == "Model"


def graph_of_openvino_model(model) -> Graph:
    """Serialize ``model`` to a temporary IR and load it; ``graph.in_memory`` is True."""
    import openvino as ov

    tmp = tempfile.TemporaryDirectory(prefix="ir2onnx-ovmodel-")
    xml = Path(tmp.name) / "model.xml"
    try:
        ov.save_model(model, str(xml), compress_to_fp16=False)
    except Exception as e:  # OpenVINO's own refusal to serialize (a model it cannot write)
        tmp.cleanup()
        raise Ir2OnnxError(f"openvino could not serialize the model: {' '.join(str(e).split())[:300]}") from None
    graph = load_ir(xml)
    graph.in_memory = True
    graph.temporary_folder = tmp  # removed with the graph and with the last Const that reads it
    for layer in graph.all_layers():
        if layer.const is not None:
            layer.const.bin.temporary_folder = tmp
    return graph
