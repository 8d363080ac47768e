"""Selftest cases of Transpose and ShuffleChannels (version 1 unless -N says otherwise). All are
compared bit for bit with the oracle."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param


def _transpose(shape, order, dtype=np.float32):
    def make(ops):
        x = param(ops, shape, dtype)
        return [(ops.transpose(x, const(ops, order)), "y")], [x]
    return make


def _shuffle(shape, axis, group, dtype=np.float32):
    def make(ops):
        x = param(ops, shape, dtype)
        return [(ops.shuffle_channels(x, axis, group), "y")], [x]
    return make


CASES = [
    Case("transpose/perm", ("Transpose", "opset1"), ov_build(_transpose([2, 3, 4], [2, 0, 1])),
         expect={"y": lambda f: np.transpose(f["x"], [2, 0, 1])}),
    Case("transpose/empty-order-reverses", ("Transpose", "opset1"), ov_build(_transpose([2, 3, 4], [], np.int32)),
         expect={"y": lambda f: np.transpose(f["x"])}, source="Transpose-1: empty input_order reverses the axes"),
    Case("shufflechannels/spec-example", ("ShuffleChannels", "opset1"), ov_build(_shuffle([1, 6, 2, 2], 1, 3)),
         inputs={"x": np.arange(24, dtype=np.float32).reshape(1, 6, 2, 2)},
         expect={"y": lambda f: f["x"][:, [0, 2, 4, 1, 3, 5]]},
         source="ShuffleChannels-1: [1, 6, 2, 2], axis 1, group 3"),
    Case("shufflechannels/i8-negative-axis-dynamic", ("ShuffleChannels", "opset1"),
         ov_build(_shuffle([None, 3, 8], -1, 4, np.int8)), shapes={"x": (2, 3, 8)},
         expect={"y": lambda f: f["x"][..., [0, 2, 4, 6, 1, 3, 5, 7]]}),
]
