"""Selftest cases of Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh-4, Acosh-4 and Atanh-4
(version 1 unless -N says otherwise). Compared with the oracle within the per-type tolerances of
:mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, ov_build, unary, uniform

TRIG_RANGES = {"Sin": (-10, 10), "Cos": (-10, 10), "Tan": (-1.5, 1.5), "Asin": (-1, 1), "Acos": (-1, 1),
               "Atan": (-10, 10), "Sinh": (-5, 5), "Cosh": (-5, 5), "Asinh": (-10, 10), "Acosh": (1, 10),
               "Atanh": (-0.99, 0.99)}


CASES: list[Case] = []

for _type, (_lo, _hi) in TRIG_RANGES.items():
    _version = "opset4" if _type in ("Asinh", "Acosh", "Atanh") else "opset1"
    CASES.append(Case(f"{_type.lower()}/f32", (_type, _version), ov_build(unary(_type.lower())), exact=False,
                      inputs=uniform(_lo, _hi), expect={"y": lambda f, fn=_type.lower(): getattr(
                          np, {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
                               "acosh": "arccosh", "atanh": "arctanh"}.get(fn, fn))(f["x"].astype(np.float64))}))
