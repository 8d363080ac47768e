"""Selftest cases of ScatterElementsUpdate-3/-12, ScatterUpdate-3 and ScatterNDUpdate-4/-15. Exact cases
(data movement, integer and boolean results) are compared bit for bit, the others within the
per-type tolerances of :mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param


def _scatter_nd_update(ops):
    import openvino.opset4 as o4

    x = param(ops, [8], np.int32)
    node = o4.scatter_nd_update(x, const(ops, [[4], [3], [1], [7]]), const(ops, [9, 10, 11, 12], np.int32))
    return [(node, "y")], [x]


def _snu15(reduction, dtype):
    def make(ops):
        x = param(ops, [4], dtype)
        node = ops.scatter_nd_update(x, const(ops, [[0], [2], [-3], [-3], [0]], np.int32),
                                     const(ops, [10, 20, 30, 40, 50], dtype), reduction)
        return [(node, "y")], [x]
    return make


def _seu3(ops):
    import openvino.opset3 as o3

    x = param(ops, [3, 4], np.int32)
    node = o3.scatter_elements_update(x, const(ops, [[1, 2], [0, 3]]), const(ops, [[11, 12], [13, 14]], np.int32),
                                      const(ops, [1]))
    return [(node, "y")], [x]


def _seu12(reduction, init, data=(2, 3, 4, 6), idx=(1, 0, 0, -2, -1, 2), upd=(10, 20, 30, 40, 70, 60), dtype=np.float32):
    def make(ops):
        x = param(ops, [len(data)], dtype)
        node = ops.scatter_elements_update(x, const(ops, list(idx)), const(ops, list(upd), dtype), const(ops, [0]),
                                           reduction, init)
        return [(node, "y")], [x]
    return make


def _scatter_update(ops):
    import openvino.opset3 as o3

    x, u = param(ops, [None, 2, 5, 3]), param(ops, [None, 2, 2, 3], name="u")
    return [(o3.scatter_update(x, const(ops, [4, 1]), u, const(ops, 2)), "y")], [x, u]


_SPEC_DATA = {"x": np.array([2, 3, 4, 6], np.float32)}
_SNU15 = "ScatterNDUpdate-15 example {}: data [1, 2, 3, 4], indices [0, 2, -3, -3, 0], updates [10 .. 50]"


def _snu15_case(name, reduction, dtype, expect, example, **kw):
    return Case(f"scatterndupdate15/{name}", ("ScatterNDUpdate", "opset15"), ov_build(_snu15(reduction, dtype)),
                inputs={"x": np.array([1, 2, 3, 4], dtype)}, expect={"y": np.array(expect, dtype)},
                source=_SNU15.format(example), min_opset=None if reduction == "none" else 18, **kw)


CASES = [
    Case("scatterndupdate/spec-example", ("ScatterNDUpdate", "opset4"), ov_build(_scatter_nd_update),
         inputs={"x": np.arange(1, 9, dtype=np.int32)}, expect={"y": np.array([1, 11, 3, 10, 9, 6, 7, 12], np.int32)},
         source="ScatterNDUpdate-3: data [1..8], indices [[4], [3], [1], [7]], updates [9, 10, 11, 12]"),
    _snu15_case("none-duplicates-last-wins", "none", np.float32, [50, 40, 20, 4], "1 (the spec prints [50, 20, 20, 4]: "
                "index -3 is 1, written by 30 then 40)"),
    _snu15_case("sum-f16-spec-example-2", "sum", np.float16, [61, 72, 23, 4], 2),
    _snu15_case("sub-i32-spec-example-3", "sub", np.int32, [-59, -68, -17, 4], 3),
    _snu15_case("prod-f32", "prod", np.float32, [500, 2400, 60, 4], "4 (the spec prints [500, 3600, 40, 4]: 2*30*40 "
                "is 2400, 3*20 is 60)"),
    _snu15_case("max-i32", "max", np.int32, [50, 40, 20, 4], "4 with max"),
    Case("scatter_elements_update3/spec-example-3", ("ScatterElementsUpdate", "opset3"), ov_build(_seu3),
         inputs={"x": np.zeros((3, 4), np.int32)},
         expect={"y": np.array([[0, 11, 12, 0], [13, 0, 0, 14], [0, 0, 0, 0]], np.int32)},
         source="ScatterElementsUpdate-12 example 3"),
    Case("scatter_elements_update12/sum-spec-example-1", ("ScatterElementsUpdate", "opset12"), ov_build(_seu12("sum", True)),
         inputs=_SPEC_DATA, exact=False, expect={"y": np.array([52, 13, 104, 76], np.float32)},
         source="ScatterElementsUpdate-12 example 1"),
    Case("scatter_elements_update12/sum-no-init-spec-example-2", ("ScatterElementsUpdate", "opset12"),
         ov_build(_seu12("sum", False, idx=(1, 0, 0, 2, 3, 2))), inputs=_SPEC_DATA, exact=False,
         expect={"y": np.array([50, 10, 100, 70], np.float32)}, source="ScatterElementsUpdate-12 example 2"),
    Case("scatter_elements_update12/prod-i32", ("ScatterElementsUpdate", "opset12"),
         ov_build(_seu12("prod", True, data=(2, 2, 2, 2), idx=(1, 1, 0, 3), upd=(11, 12, 13, 14), dtype=np.int32)),
         inputs={"x": np.full(4, 2, np.int32)}, expect={"y": np.array([26, 264, 2, 28], np.int32)}),
    Case("scatter_elements_update12/mean-i32-rounds-down", ("ScatterElementsUpdate", "opset12"),
         ov_build(_seu12("mean", True, data=(-7, 3, 4, 6), idx=(0, 0, 1, 2), upd=(0, 0, 2, -9), dtype=np.int32)),
         inputs={"x": np.array([-7, 3, 4, 6], np.int32)}, expect={"y": np.array([-3, 2, -3, 6], np.int32)},
         openvino_deviates="OpenVINO 2026.4's CPU plugin truncates an integer mean toward zero "
                           "(mean(-7, 0, 0) = -2); the spec rounds down (-3)"),
    Case("scatter_update/kv-cache-axis2", ("ScatterUpdate", "opset3"), ov_build(_scatter_update),
         shapes={"x": (2, 2, 5, 3), "u": (2, 2, 2, 3)}),
]
