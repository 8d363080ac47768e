"""Compare two backends' values of one output: default tolerances per element type.

An element agrees when ``|a - b| <= atol + rtol * max(|a|, |b|)`` (symmetric, so the order of the
pair does not matter); NaN agrees with NaN and an infinity with the same infinity. Integer and
boolean outputs must be equal (no tolerance applies). Defaults (``DEFAULT_TOLERANCES``):

============  ======  ======
element type  rtol    atol
============  ======  ======
f64           1e-9    1e-12
f32           1e-4    1e-4
f16           1e-2    1e-2
bf16          5e-2    5e-2
f8e4m3        1.25e-1 1.25e-1
f8e5m2        2.5e-1  2.5e-1
integers      exact   exact
boolean       exact   exact
============  ======  ======

f32's 1e-4 covers different summation orders of convolutions over hundreds of terms; data
movement ops are bit-exact in practice and the selftest demands exactly that of them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-9, 1e-12),
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (5e-2, 5e-2),
    "float8_e4m3fn": (1.25e-1, 1.25e-1),
    "float8_e5m2": (2.5e-1, 2.5e-1),
}
FALLBACK_FLOAT = (2.5e-1, 2.5e-1)  # other narrow float types (f8e8m0, f4e2m1)


def is_exact_type(dtype) -> bool:
    """Integer and boolean types are compared for equality."""
    return np.dtype(dtype).kind in "iub"


def default_tolerance(dtype) -> tuple[float, float]:
    """``(rtol, atol)`` for an output of this numpy dtype; ``(0, 0)`` for exact types."""
    dtype = np.dtype(dtype)
    if is_exact_type(dtype):
        return 0.0, 0.0
    return DEFAULT_TOLERANCES.get(dtype.name, FALLBACK_FLOAT)


@dataclass
class Comparison:
    """One output compared between two backends."""

    output: str
    a: str  # backend names
    b: str
    passed: bool
    shape: tuple | None = None  # of ``a`` (equal to ``b``'s when they could be compared)
    dtype: str = ""
    max_abs: float | None = None
    max_rel: float | None = None
    mismatches: int = 0  # elements outside tolerance
    rtol: float = 0.0
    atol: float = 0.0
    exact: bool = False
    reason: str = ""  # why it failed before values were compared (shape, dtype, missing)
    rule: str = ""  # "" (element-wise) or the task rule that judged it (ir2onnx.harness.rules)
    detail: str = ""  # that rule's measurements and thresholds, one line
    metrics: dict = field(default_factory=dict)  # that rule's numbers, by name (JSON-ready)

    @property
    def pair(self) -> str:
        return f"{self.a} vs {self.b}"

    def to_dict(self) -> dict:
        return {"output": self.output, "a": self.a, "b": self.b, "passed": self.passed,
                "shape": None if self.shape is None else list(self.shape), "dtype": self.dtype,
                "max_abs": self.max_abs, "max_rel": self.max_rel, "mismatches": self.mismatches,
                "rtol": self.rtol, "atol": self.atol, "exact": self.exact, "reason": self.reason,
                "rule": self.rule or "elementwise", "detail": self.detail, "metrics": dict(self.metrics)}


def compare(output: str, a_name: str, a: np.ndarray, b_name: str, b: np.ndarray,
            rtol: float | None = None, atol: float | None = None, bitexact: bool = False) -> Comparison:
    """Compare ``a`` with ``b``; ``rtol``/``atol`` override the float defaults (never integers).

    ``bitexact`` demands the same bytes (for data-movement ops; NaN payloads and -0.0 included).
    """
    a, b = np.asarray(a), np.asarray(b)
    c = Comparison(output, a_name, b_name, False, tuple(a.shape), str(a.dtype))
    if a.dtype != b.dtype:
        c.reason = f"dtype {a.dtype} vs {b.dtype}"
        return c
    if a.shape != b.shape:
        c.reason = f"shape {list(a.shape)} vs {list(b.shape)}"
        return c
    exact = is_exact_type(a.dtype)
    d_rtol, d_atol = default_tolerance(a.dtype)
    c.rtol = 0.0 if exact or bitexact else (d_rtol if rtol is None else rtol)
    c.atol = 0.0 if exact or bitexact else (d_atol if atol is None else atol)
    c.exact = exact or bitexact
    if a.size == 0:
        c.max_abs = c.max_rel = 0.0
        c.passed = True
        return c
    if exact:
        if a.dtype == np.bool_:
            diff = (a != b).astype(np.float64)
        else:  # exact integer difference, reported as a float
            diff = np.array(np.abs(a.astype(np.float64) - b.astype(np.float64)))  # 0-d stays an array
            diff[a != b] = np.maximum(diff[a != b], 1.0)
        bad = a != b
        denom = np.maximum(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
    else:
        fa, fb = a.astype(np.float64), b.astype(np.float64)
        same = (fa == fb) | (np.isnan(fa) & np.isnan(fb))
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.where(same, 0.0, np.abs(fa - fb))
            denom = np.maximum(np.abs(fa), np.abs(fb))
            bad = ~same & ~(np.isfinite(diff) & (diff <= c.atol + c.rtol * denom))  # NaN, inf: bad
        diff = np.where(np.isnan(diff), np.inf, diff)
        if bitexact:
            bad = bad | _byte_mismatch(a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(diff == 0, 0.0, diff / np.where(denom == 0, np.inf, denom))
        rel = np.where((diff > 0) & (denom == 0), np.inf, rel)
    c.max_abs = float(diff.max())
    c.max_rel = float(rel.max())
    c.mismatches = int(np.count_nonzero(bad))
    c.passed = c.mismatches == 0
    return c


def _byte_mismatch(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per element: do the bytes differ?"""
    width = a.dtype.itemsize
    ua = np.ascontiguousarray(a).view(np.uint8).reshape(a.shape + (width,))
    ub = np.ascontiguousarray(b).view(np.uint8).reshape(b.shape + (width,))
    return np.any(ua != ub, axis=-1)
