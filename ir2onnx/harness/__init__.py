"""The interop harness behind ``ir2onnx check``: the backends (onnxruntime, the NumPy oracles, OpenVINO in a child
process), how their outputs are compared, and the reports."""
