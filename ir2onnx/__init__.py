"""ir2onnx: convert OpenVINO IR models to ONNX, run them on onnxruntime, and check both agree.

Public API::

    graph = ir2onnx.load_ir("model.xml")              # the IR, validated
    model = ir2onnx.convert("model.xml", opset=17)    # an onnx.ModelProto
    model = ir2onnx.convert(ov_model)                 # an in-memory openvino.Model too
    ir2onnx.convert_file("model.xml", "model.onnx")   # streamed to disk, checked, atomic
    result = ir2onnx.check("model.xml")               # onnxruntime vs oracle vs OpenVINO
    outputs = ir2onnx.run("model.onnx", {"x": x})     # {output name: ndarray} from onnxruntime
"""
from __future__ import annotations

from . import errors
from .api import convert, convert_file, load_ir
from .harness.check import CheckResult, check
from .inference import run
from .version import __version__

__all__ = ["convert", "convert_file", "load_ir", "check", "CheckResult", "run", "__version__"]
