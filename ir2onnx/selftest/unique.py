"""Selftest cases of Unique-10, all four outputs bit for bit: the spec's worked examples
(flattened sorted and unsorted; slices along axis 0) and the i32 index/count types. OpenVINO's
CPU plugin is compared where it is right (flattened, axis 0 for types wider than 8 bits)."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param

UQ = ("Unique", "opset10")
NAMES = ("values", "indices", "inverse", "counts")


def _unique(shape, axis, sort, itype="i64", ctype="i64", dtype=np.float32):
    def make(ops):
        import openvino.opset10 as o10

        x = param(ops, shape, dtype)
        args = [x] + ([const(ops, axis)] if axis is not None else [])
        u = o10.unique(*args, sorted=sort, index_element_type=itype, count_element_type=ctype)
        return list(zip(u.outputs(), NAMES)), [x]
    return make


FLAT = {"x": np.array([-1, 2, 1, 3, 1, 2, -1], np.float32)}
ROWS = {"x": np.array([[-1, 2, 1], [3, 1, 2], [-1, 2, 1], [0, 0, 0]], np.float32)}

CASES = [
    Case("unique/flat-sorted", UQ, ov_build(_unique([None], None, True)), inputs=FLAT,
         expect={"values": np.array([-1, 1, 2, 3], np.float32), "indices": np.array([0, 2, 1, 3]),
                 "inverse": np.array([0, 2, 1, 3, 1, 2, 0]), "counts": np.array([2, 2, 2, 1])}),
    Case("unique/flat-unsorted-i32", UQ, ov_build(_unique([None], None, False, "i32", "i32")), inputs=FLAT,
         expect={"values": np.array([-1, 2, 1, 3], np.float32), "indices": np.array([0, 1, 2, 3], np.int32),
                 "inverse": np.array([0, 1, 2, 3, 2, 1, 0], np.int32), "counts": np.array([2, 2, 2, 1], np.int32)}),
    Case("unique/axis-0-sorted", UQ, ov_build(_unique([None, 3], 0, True)), inputs=ROWS,
         expect={"values": np.array([[-1, 2, 1], [0, 0, 0], [3, 1, 2]], np.float32), "indices": np.array([0, 3, 1]),
                 "inverse": np.array([0, 2, 0, 1]), "counts": np.array([2, 1, 1])}),
    Case("unique/axis-0-unsorted-i32-data", UQ, ov_build(_unique([None, 3], 0, False, dtype=np.int32)),
         inputs={"x": ROWS["x"].astype(np.int32)},
         expect={"indices": np.array([0, 1, 3]), "inverse": np.array([0, 1, 0, 2]), "counts": np.array([2, 1, 1])}),
]
