"""ir2onnx: convert OpenVINO IR models to ONNX, run them on onnxruntime, and check both agree.

Public API::

    graph = ir2onnx.load_ir("model.xml")              # the IR, validated
    model = ir2onnx.convert("model.xml", opset=17)    # an onnx.ModelProto
    ir2onnx.convert_file("model.xml", "model.onnx")   # streamed to disk, checked, atomic
    result = ir2onnx.check("model.xml")               # onnxruntime vs oracle vs OpenVINO
"""
from __future__ import annotations

__version__ = "0.1.0"

from . import errors  # noqa: E402
from .api import convert, convert_file, load_ir  # noqa: E402
from .harness import CheckResult, check  # noqa: E402

__all__ = ["convert", "convert_file", "load_ir", "check", "CheckResult", "__version__"]
