"""Oracle of Inverse-14 from the definition: per matrix, solve ``A X = I`` by Gaussian elimination
with partial pivoting in float64 (forward elimination, then back substitution per column);
``adjoint=true`` inverts the conjugate transpose (TensorFlow's MatrixInverse, which OpenVINO's
TensorFlow frontend maps to it and OpenVINO's CPU plugin computes; the spec text says the
adjugate, see docs/deviations.md)."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from .registry import oracle


def _solve(matrix: np.ndarray) -> np.ndarray:
    n = matrix.shape[0]
    u = [[float(v) for v in row] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(matrix)]
    for k in range(n):
        p = max(range(k, n), key=lambda i: (abs(u[i][k]), -i))
        if p != k:
            u[k], u[p] = u[p], u[k]
        for i in range(k + 1, n):
            f = u[i][k] / u[k][k]
            u[i] = [a - f * b for a, b in zip(u[i], u[k])]
    x = np.zeros((n, n))
    for c in range(n):
        for i in reversed(range(n)):
            s = u[i][n + c] - sum(u[i][j] * x[j, c] for j in range(i + 1, n))
            x[i, c] = s / u[i][i]
    return x


@oracle("Inverse", "opset14")
def inverse14(layer, inputs):
    a = np.asarray(inputs[0])
    if a.dtype.kind != "f":
        raise UnsupportedLayer(layer, "Inverse takes floats only")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise InvalidLayer(layer, "Inverse needs square matrices in the last two dims")
    out = np.empty(a.shape, a.dtype)
    for batch in itertools.product(*[range(d) for d in a.shape[:-2]]):
        m = a[batch]
        out[batch] = _solve(m.T if layer.attrs.get("adjoint") else m)
    return [out]
