"""``ir2onnx selftest``: the built-in cases of every op family, each written as IR, converted, run on
onnxruntime and OpenVINO and compared with the NumPy oracles, and the conformance matrix they make.

runner.py runs the cases (and registers the command), catalog.py lists the case modules,
cases.py defines a case and the builders the case modules share, matrix.py renders the matrix;
every other module holds the cases of one op family and is named like its lowerings' module in
ir2onnx/ops/ and its oracles' module in ir2onnx/oracles/.
"""
from .catalog import all_cases
from .runner import run

__all__ = ["all_cases", "run"]
