"""Selftest cases of OneHot-1/-16, compared bit for bit (data movement): the spec's examples
(negative indices all off; OneHot-16 normalize wraps [-depth, -1])."""
from __future__ import annotations

import importlib

import numpy as np

from .cases import Case, const, ov_build, param

_INDICES = np.array([0, 2, -1, -3, 3, -4, 1], np.int64)


def _one_hot(version, axis, shape=(7,), mode=None, dtype=np.float32, on=5, off=0, index_type=np.int64):
    def make(ops):
        mod = importlib.import_module(f"openvino.opset{version}")
        x = param(ops, list(shape), index_type)
        kw = {"negative_indices_mode": mode} if mode else {}
        y = mod.one_hot(x, const(ops, 3, np.int64), const(ops, on, dtype), const(ops, off, dtype), axis, **kw)
        return [(y, "y")], [x]
    return make


def _expect(axis, normalize):
    def expect(feeds):
        idx = feeds["x"].astype(np.int64)
        if normalize:
            idx = np.where((idx < 0) & (idx >= -3), idx + 3, idx)
        hot = np.moveaxis(idx[..., None] == np.arange(3), -1, axis)
        return np.where(hot, 5, 0).astype(np.float32)
    return expect


CASES = [
    Case("onehot1/negative-is-off", ("OneHot", "opset1"), ov_build(_one_hot(1, -1)), inputs={"x": _INDICES},
         expect={"y": _expect(-1, False)}, source="OneHot-1: indices [0, 2, -1, ...], depth 3, on 5, off 0"),
    Case("onehot1/axis0-2d-i32", ("OneHot", "opset1"), ov_build(_one_hot(1, 0, (2, 3), index_type=np.int32)),
         inputs={"x": np.array([[0, 2, 5], [1, -1, 2]], np.int32)}, expect={"y": _expect(0, False)}),
    Case("onehot16/normalize", ("OneHot", "opset16"), ov_build(_one_hot(16, -1, mode="normalize")),
         inputs={"x": _INDICES}, expect={"y": _expect(-1, True)},
         source="OneHot-16 negative_indices_mode=normalize: -1 -> 2, -3 -> 0, -4 stays off"),
    Case("onehot16/ignore-negative-dynamic", ("OneHot", "opset16"),
         ov_build(_one_hot(16, 1, (None, None), mode="ignore_negative")), shapes={"x": (2, 4)},
         inputs={"x": np.array([[0, -1, 2, 1], [-3, 3, 1, 0]], np.int64)}, expect={"y": _expect(1, False)}),
]
