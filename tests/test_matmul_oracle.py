"""The MatMul-1 oracle (numpy.matmul in float64 since issue 23) against the spec's sum written
out element by element, on small operands of every rank, flag and type (integers bit for bit,
floats within one unit in the last place), and on a moderate BERT-sized one (against a direct
float64 formula), which the former Python loop took minutes over."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.matmul import matmul

from util import equal_to_the_formula


class _Layer:
    type, version, name, id = "MatMul", "opset1", "mm", "0"

    def __init__(self, ta=False, tb=False):
        self.attrs = {"transpose_a": ta, "transpose_b": tb}


def _spec(a, b, ta, tb):
    """The spec element by element: 1-D operands are a row (A) / column (B) whatever the flags,
    batch dims broadcast, floats summed in float64, integers on Python ints wrapped to the type."""
    a2 = a[None, :] if a.ndim == 1 else (np.swapaxes(a, -1, -2) if ta else a)
    b2 = b[:, None] if b.ndim == 1 else (np.swapaxes(b, -1, -2) if tb else b)
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    m, k, n = a2.shape[-2], a2.shape[-1], b2.shape[-1]
    out = np.zeros(batch + (m, n), a.dtype)
    for pos in itertools.product(*map(range, batch)):
        pa = tuple(0 if d == 1 else p for d, p in zip(a2.shape[:-2], pos[len(pos) - a2.ndim + 2:]))
        pb = tuple(0 if d == 1 else p for d, p in zip(b2.shape[:-2], pos[len(pos) - b2.ndim + 2:]))
        for i, j in itertools.product(range(m), range(n)):
            if a.dtype.kind in "iu":
                acc = sum(int(a2[pa + (i, q)]) * int(b2[pb + (q, j)]) for q in range(k))
                bits = a.dtype.itemsize * 8
                acc %= 1 << bits
                out[pos + (i, j)] = acc - (1 << bits) if a.dtype.kind == "i" and acc >= 1 << (bits - 1) else acc
            else:
                out[pos + (i, j)] = sum(float(a2[pa + (i, q)]) * float(b2[pb + (q, j)]) for q in range(k))
    if a.ndim == 1:
        out = out[..., 0, :]
    if b.ndim == 1:
        out = out[..., 0]
    return out


SHAPES = [((3, 4), (4, 5), False, False), ((2, 1, 4, 3), (3, 4, 5), True, False),
          ((4,), (5, 4), True, True), ((3, 4), (4,), False, True), ((2, 3, 4), (1, 5, 3), True, True),
          ((4,), (4,), False, False), ((0, 2, 3), (3, 2), False, False)]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int8, np.uint8, np.int64])
@pytest.mark.parametrize("sa,sb,ta,tb", SHAPES)
def test_equals_the_spec_sum(sa, sb, ta, tb, dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(sa) * 60).astype(dtype)  # integers overflow i8/u8: wrapping checked
    b = (rng.standard_normal(sb) * 60).astype(dtype)
    got = matmul(_Layer(ta, tb), [a, b])[0]
    want = _spec(a, b, ta, tb)
    equal_to_the_formula(got, want)


def test_bert_sized_matmul_finishes_and_equals_float64_formula():
    """[1, 128, 768] x [3072, 768]^T: 302M multiply-adds, a fraction of a second."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((1, 128, 768)).astype(np.float32)
    b = (rng.standard_normal((3072, 768)) * 0.02).astype(np.float32)
    got = matmul(_Layer(tb=True), [a, b])[0]
    want = np.einsum("bik,jk->bij", a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    assert got.shape == (1, 128, 3072) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("sa,sb", [((3, 4), (5, 6)), ((2, 3, 4), (3, 4, 5))])
def test_mismatched_operands_are_invalid(sa, sb):
    with pytest.raises(InvalidLayer):
        matmul(_Layer(), [np.zeros(sa, np.float32), np.zeros(sb, np.float32)])
