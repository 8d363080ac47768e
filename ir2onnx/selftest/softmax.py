"""Selftest cases of SoftMax-1/-8 and LogSoftmax-5. Compared with the oracle within the per-type
tolerances of :mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

from .cases import Case, normal, one_input, ov_build, unary

CASES = [
    Case("softmax1/axis1", ("SoftMax", "opset1"), ov_build(one_input(lambda o, x: o.softmax(x, 1), "opset1")),
         exact=False),
    Case("softmax8/axis-1", ("SoftMax", "opset8"), ov_build(one_input(lambda o, x: o.softmax(x, -1), "opset8")),
         exact=False),
    Case("logsoftmax/last-axis", ("LogSoftmax", "opset5"), ov_build(unary("log_softmax", -1)), exact=False,
         inputs=normal()),
]
