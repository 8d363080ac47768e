"""An in-memory ``openvino.Model`` (what ``openvino.convert_model`` returns) as an ir2onnx Graph.

The model is serialized by OpenVINO itself (``openvino.save_model`` with ``compress_to_fp16=False``,
so the weights keep their precision) into a temporary folder and read back like any IR. The folder
lives as long as the Graph (the OpenVINO backend of ``check`` reads the files again) or the
weights file object its Consts read (a converted model copies the weights lazily), and is
removed when both are collected. openvino stays an optional import: it is imported only
here, and only for an object that is already an OpenVINO model.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path

from ..errors import Ir2OnnxError
from .element_types import TYPES
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
    _unrounded_inputs(graph)
    graph.in_memory = True
    graph.temporary_folder = tmp  # removed with the graph and with the last Const that reads it
    for layer in graph.all_layers():
        if layer.const is not None:
            layer.const.bin.temporary_folder = tmp
    return graph


_INSERTED = re.compile(r"Convert_\d+")  # the name OpenVINO gives a Convert it inserts itself


def _unrounded_inputs(graph: Graph) -> None:
    """OpenVINO's reader presents an IR v10 model's f16 input as f32 and inserts an unnamed
    Convert to f16 after it (``Convert_<n>``); the f16 model then runs in f32 (the CPU plugin at
    f32 inference precision does not round through that Convert), as ir2onnx runs the v10 file
    (:mod:`ir2onnx.lowering.precision`: f16 Parameters become f32). Such a Convert becomes a
    Convert to f32 here, so that the in-memory model computes what the file does; a Convert the
    model names itself (``x.half()``) still rounds."""
    f16, f32 = TYPES["f16"], TYPES["f32"]
    ids = {layer.id: layer for layer in graph.order}
    for layer in graph.order:
        if layer.type != "Convert" or layer.attrs.get("destination_type") != f16 or not _INSERTED.fullmatch(layer.name):
            continue
        src = ids.get(layer.sources[0].layer) if layer.sources else None
        if src is not None and src.type == "Parameter" and src.attrs.get("element_type") == f32:
            layer.attrs["destination_type"] = f32
            layer.outputs[0].etype = f32
