"""Selftest cases of Broadcast-1/-3 and Tile (version 1 unless -N says otherwise). All are compared
bit for bit with the oracle."""
from __future__ import annotations

import importlib

import numpy as np

from .cases import Case, const, ov_build, param


def _broadcast(opset, mode, shape, target, axes=None):
    def make(ops):
        o = importlib.import_module(f"openvino.{opset}")
        x = param(ops, shape)
        args = [x, const(ops, target)] + ([const(ops, axes)] if axes is not None else [])
        return [(o.broadcast(*args, mode) if opset == "opset1" else o.broadcast(*args, broadcast_spec=mode), "y")], [x]
    return make


def _broadcast_runtime(ops):
    x, like = param(ops, [3, 1]), param(ops, [None, 3, 4], name="like")
    return [(ops.broadcast(x, ops.shape_of(like)), "y")], [x, like]


def _tile(ops):
    x = param(ops, [2, 3], np.int64)
    return [(ops.tile(x, const(ops, [2, 1, 2])), "y")], [x]


BC1, BC3 = ("Broadcast", "opset1"), ("Broadcast", "opset3")


CASES = [
    Case("broadcast1/numpy", BC1, ov_build(_broadcast("opset1", "numpy", [3, 1], [2, 3, 4])),
         expect={"y": lambda f: np.broadcast_to(f["x"], (2, 3, 4))}),
    Case("broadcast1/explicit", BC1, ov_build(_broadcast("opset1", "explicit", [3], [2, 3, 4], [1])),
         expect={"y": lambda f: np.broadcast_to(f["x"].reshape(1, 3, 1), (2, 3, 4))}),
    Case("broadcast3/bidirectional", BC3, ov_build(_broadcast("opset15", "bidirectional", [3, 1], [2, 1, 4])),
         expect={"y": lambda f: f["x"] * np.ones((2, 1, 4), np.float32)}),
    Case("broadcast3/explicit-spec-example", BC3, ov_build(_broadcast("opset15", "explicit", [5, 5], [1, 5, 5, 2],
                                                                         [1, 2])),
         expect={"y": lambda f: np.broadcast_to(f["x"].reshape(1, 5, 5, 1), (1, 5, 5, 2))},
         source="Broadcast-3: the spec's [50, 50] -> [1, 50, 50, 16] example, smaller"),
    Case("broadcast3/run-time-target", BC3, ov_build(_broadcast_runtime), shapes={"like": (2, 3, 4)},
         expect={"y": lambda f: np.broadcast_to(f["x"], (2, 3, 4))}),
    Case("tile/repeats-longer-than-rank", ("Tile", "opset1"), ov_build(_tile),
         expect={"y": lambda f: np.tile(f["x"], [2, 1, 2])}),
]
