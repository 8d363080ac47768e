"""Selftest cases of Inverse-14 (inverse and adjugate, batches, pivoting)."""
from __future__ import annotations

import numpy as np

from .cases import Case, ov_build, param

INV = ("Inverse", "opset14")


def _inverse(shape, adjoint=False, dtype=np.float32):
    def make(ops):
        import openvino.opset14 as o14

        x = param(ops, shape, dtype)
        return [(o14.inverse(x, adjoint), "y")], [x]
    return make


def _well_conditioned(shape):
    def feeds(rng):
        n = shape[-1]
        return {"x": (rng.uniform(-1, 1, shape) + 3 * np.eye(n) * rng.choice([-1, 1], shape[:-1])[..., None]).astype(np.float32)}
    return feeds


CASES = [
    Case("inverse14/2x2", INV, ov_build(_inverse([2, 2])), exact=False,
         inputs={"x": np.array([[4, 7], [2, 6]], np.float32)},
         expect={"y": np.array([[0.6, -0.7], [-0.2, 0.4]], np.float32)}, source="Inverse-14: A @ inverse = I"),
    Case("inverse14/adjoint-2x2", INV, ov_build(_inverse([2, 2], True)), exact=False,
         inputs={"x": np.array([[4, 7], [2, 6]], np.float32)},
         expect={"y": np.array([[0.6, -0.2], [-0.7, 0.4]], np.float32)},
         source="Inverse-14 adjoint: TensorFlow's inverse of the transpose (the spec text: the adjugate)"),
    Case("inverse14/batch-pivoting", INV, ov_build(_inverse([None, 2, 4, 4])), exact=False,
         shapes={"x": (3, 2, 4, 4)}, inputs=lambda rng: {"x": np.array([[[[0, 1, 2, 0], [1, 0, 0, 3], [2, 1, 0, 1],
                                                                          [0, 2, 1, 1]]] * 2] * 3, np.float32)},
         expect={"y": (3, 2, 4, 4)}, source="a zero on the diagonal: needs the row swap"),
    Case("inverse14/adjoint-5x5", INV, ov_build(_inverse([2, 5, 5], True)), exact=False,
         inputs=_well_conditioned((2, 5, 5)), expect={"y": (2, 5, 5)}),
]
