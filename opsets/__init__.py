"""Op schema data files (installed as the ``ir2onnx._opsets`` package); see ir2onnx/ir/schema.py."""
