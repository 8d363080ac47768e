"""Selftest cases of GroupNormalization-12, BatchNormInference-1/-5, ConvertLike-1, Eye-9 and
Einsum-7. ConvertLike and Eye are compared bit for bit; the rest within the per-type tolerances
of :mod:`ir2onnx.compare`."""
from __future__ import annotations

import numpy as np

from .selftest_cases import Case, const, ov_build, param

_RNG = np.random.default_rng(12)
_SCALE = _RNG.uniform(0.5, 2, 8).astype(np.float32)
_BIAS = _RNG.standard_normal(8).astype(np.float32)
_BN = [_RNG.uniform(0.5, 2, 3), _RNG.standard_normal(3), _RNG.standard_normal(3), _RNG.uniform(0.1, 3, 3)]


def _group_norm(shape, groups, dtype=np.float32):
    def make(ops):
        import openvino.opset12 as ops12

        x = param(ops, list(shape), dtype)
        c = shape[1]
        y = ops12.group_normalization(x, const(ops, _SCALE[:c], dtype), const(ops, _BIAS[:c], dtype), groups, 1e-5)
        return [(y, "y")], [x]
    return make


def _gn_expect(groups):
    def expect(feeds):
        v = feeds["x"].astype(np.float64)
        r = v.reshape(v.shape[0], groups, -1)
        n = ((r - r.mean(2, keepdims=True)) / np.sqrt(r.var(2, keepdims=True) + 1e-5)).reshape(v.shape)
        shape = (-1,) + (1,) * (v.ndim - 2)
        return n * _SCALE[:v.shape[1]].reshape(shape) + _BIAS[:v.shape[1]].reshape(shape)
    return expect


def _batch_norm(version, shape=(2, 3, 4, 4), dtype=np.float32):
    def make(ops):
        import importlib

        mod = importlib.import_module(f"openvino.opset{version}")
        x = param(ops, list(shape), dtype)
        return [(mod.batch_norm_inference(x, *[const(ops, p, dtype) for p in _BN], 1e-3), "y")], [x]
    return make


def _bn_expect(feeds):
    g, b, m, v = (p.reshape(-1, 1, 1) for p in _BN)
    return g * (feeds["x"].astype(np.float64) - m) / np.sqrt(v + 1e-3) + b


def _convert_like(src, dst):
    def make(ops):
        x = param(ops, [2, 3], src)
        return [(ops.convert_like(x, const(ops, [0], dst)), "y")], [x]
    return make


def _eye(rows, cols, diag, otype, batch=None):
    def make(ops):
        n = param(ops, [], np.int64, "n")
        args = [n, const(ops, [cols]), const(ops, diag), otype] + ([const(ops, batch)] if batch else [])
        return [(ops.eye(*args), "y")], [n]
    return make


def _einsum(equation, shapes):
    def make(ops):
        ps = [param(ops, list(s), np.float32, f"x{i}") for i, s in enumerate(shapes)]
        return [(ops.einsum(ps, equation), "y")], ps
    return make


def _einsum_expect(equation, count):
    return lambda f: np.einsum(equation, *[f[f"x{i}"].astype(np.float64) for i in range(count)])


CASES = [
    Case("groupnorm/4d-g4", ("GroupNormalization", "opset12"), ov_build(_group_norm((2, 8, 5, 7), 4)),
         exact=False, expect={"y": _gn_expect(4)}, source="GroupNormalization-12: a diffusion U-Net block"),
    Case("groupnorm/dynamic-f16", ("GroupNormalization", "opset12"),
         ov_build(_group_norm((None, 6, None, None), 3, np.float16)), exact=False, shapes={"x": (1, 6, 3, 4)}),
    Case("batchnorm5/const-params", ("BatchNormInference", "opset5"), ov_build(_batch_norm(5)), exact=False,
         expect={"y": _bn_expect}),
    Case("batchnorm1/gamma-beta-first", ("BatchNormInference", "opset1"), ov_build(_batch_norm(1)), exact=False,
         expect={"y": _bn_expect}),
    Case("convertlike/f32-i32", ("ConvertLike", "opset1"), ov_build(_convert_like(np.float32, np.int32)),
         inputs=lambda rng: {"x": rng.uniform(-100, 100, (2, 3)).astype(np.float32)},
         expect={"y": lambda f: np.trunc(f["x"]).astype(np.int32)}),
    Case("convertlike/i64-f16", ("ConvertLike", "opset1"), ov_build(_convert_like(np.int64, np.float16))),
    Case("eye/spec-example-1", ("Eye", "opset9"), ov_build(_eye(3, 4, 2, "i32")), inputs={"n": np.array(3, np.int64)},
         expect={"y": np.array([[0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0]], np.int32)}, source="Eye-9 example 1"),
    Case("eye/spec-example-2", ("Eye", "opset9"), ov_build(_eye(3, 4, -1, "i32")), inputs={"n": np.array(3, np.int64)},
         expect={"y": np.array([[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]], np.int32)}, source="Eye-9 example 2"),
    Case("eye/batched-f16", ("Eye", "opset9"), ov_build(_eye(2, 2, 5, "f16", [1, 2])), inputs={"n": np.array(2, np.int64)},
         expect={"y": np.zeros((1, 2, 2, 2), np.float16)}, source="Eye-9 example 3"),
    Case("einsum/matmul", ("Einsum", "opset7"), ov_build(_einsum("ij,jk->ik", [(2, 3), (3, 4)])), exact=False,
         expect={"y": _einsum_expect("ij,jk->ik", 2)}),
    Case("einsum/implicit-ellipsis-broadcast", ("Einsum", "opset7"),
         ov_build(_einsum("...ij,...jk", [(2, 2, 3), (3, 4)])), exact=False,
         expect={"y": _einsum_expect("...ij,...jk", 2)}),
    Case("einsum/diagonal", ("Einsum", "opset7"), ov_build(_einsum("iij->ij", [(2, 2, 3)])), exact=False,
         expect={"y": _einsum_expect("iij->ij", 1)}),
]
