"""Rounding rules of OpenVINO's kernels that ONNX's Round (half to even) does not have."""
from __future__ import annotations

import numpy as np

from ...lowering.builder import Builder


def round_half_away(g: Builder, v) -> str:
    """``round(v)`` with halves away from zero (C's ``round``), for float ``v``: the integer part
    of ``|v|`` plus 1 where the fraction is at least 0.5, with ``v``'s sign. Exact: ``|v| -
    floor(|v|)`` is exact in floating point."""
    dtype = np.float32
    mag = g.Abs(v)
    low = g.Floor(mag)
    half, one = (g.const(np.asarray(x, dtype), dtype, name) for x, name in ((0.5, "half"), (1.0, "one")))
    return g.Mul(g.Sign(v), g.Where(g.GreaterOrEqual(g.Sub(mag, low), half), g.Add(low, one), low))
