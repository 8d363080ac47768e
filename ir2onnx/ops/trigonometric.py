"""Trigonometric and hyperbolic ops, one ONNX op each: Sin, Cos, Tan, Asin, Acos, Atan, Sinh,
Cosh (-1) and Asinh, Acosh, Atanh (-4).

Float inputs only: onnxruntime's CPU provider has these for f16 and f32, and Sin/Cos also for
f64; the other f64 cases and every integer type (OpenVINO rounds the result to an integer, ONNX
has no integer kernel) are refused with UnsupportedLayer. Out-of-domain inputs give NaN (Asin(2))
or an infinity (Atanh(1)), as in the spec. Small constant inputs are folded at convert time.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import float_elementwise, foldable

# IR type -> (IR version, ONNX op, numpy function, f64 supported by onnxruntime's CPU provider)
TRIG = {
    "Sin": ("opset1", "Sin", np.sin, True),
    "Cos": ("opset1", "Cos", np.cos, True),
    "Tan": ("opset1", "Tan", np.tan, False),
    "Asin": ("opset1", "Asin", np.arcsin, False),
    "Acos": ("opset1", "Acos", np.arccos, False),
    "Atan": ("opset1", "Atan", np.arctan, False),
    "Sinh": ("opset1", "Sinh", np.sinh, False),
    "Cosh": ("opset1", "Cosh", np.cosh, False),
    "Asinh": ("opset4", "Asinh", np.arcsinh, False),
    "Acosh": ("opset4", "Acosh", np.arccosh, False),
    "Atanh": ("opset4", "Atanh", np.arctanh, False),
}


def _make(ir_type: str, onnx_op: str, fn, f64: bool):
    def lowering(ctx, layer, inputs):
        x = inputs[0]
        if not f64 and x.etype is not None and x.etype.name == "f64" and not foldable(x):
            raise UnsupportedLayer(layer, f"{ir_type} on f64 is not supported "
                                          f"(onnxruntime's {onnx_op} is f16/f32 only)")
        return float_elementwise(ctx, layer, inputs, lambda v: ctx.b.op(onnx_op, v), fn)

    version = TRIG[ir_type][0]
    lowering.__name__ = ir_type.lower()
    lowering.__doc__ = f"{ir_type}-{version[5:]} -> {onnx_op} (f16, f32{', f64' if f64 else ''})."
    return lowering


for _type, (_version, _op, _fn, _f64) in TRIG.items():
    lowers(_type, _version)(_make(_type, _op, _fn, _f64))
