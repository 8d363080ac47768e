"""Selftest cases of GatherElements-6, ScatterElementsUpdate-3/-12, ScatterUpdate-3, Reverse-1 and
Roll-7 (the specs' worked examples where they have them). Data movement is compared bit for bit;
the sum/prod/mean reductions of ScatterElementsUpdate-12 within tolerances. (min/max need
--opset 18, so the default-opset selftest has no case of them; tests/test_scatter2.py covers them.)"""
from __future__ import annotations

import numpy as np

from .selftest_cases import Case, const, iota, ov_build, param


def _gather_elements(ops):
    import openvino.opset6 as o6

    x, i = param(ops, [None, 3]), param(ops, [None, 2], np.int32, "i")
    return [(o6.gather_elements(x, i, 1), "y")], [x, i]


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


def _reverse(mode, axes):
    def make(ops):
        from openvino.utils.node_factory import NodeFactory

        x = param(ops, [2, 3, 4], np.float16)
        dtype = np.bool_ if mode == "mask" else np.int64
        node = NodeFactory("opset1").create("Reverse", [x.output(0), const(ops, axes, dtype).output(0)], {"mode": mode})
        return [(node, "y")], [x]
    return make


def _roll(shift, axes, shape=(4, 3)):
    def make(ops):
        import openvino.opset7 as o7

        x = param(ops, [None, shape[1]], np.int32)
        return [(o7.roll(x, const(ops, shift), const(ops, axes)), "y")], [x]
    return make


_SPEC_DATA = {"x": np.array([2, 3, 4, 6], np.float32)}
_ROLL_X = {"x": iota((4, 3), np.int32)}

CASES = [
    Case("gather_elements/negative-indices-dynamic", ("GatherElements", "opset6"), ov_build(_gather_elements),
         inputs={"x": iota((2, 3)), "i": np.array([[0, -1], [2, -3]], np.int32)}, shapes={"x": (2, 3), "i": (2, 2)},
         expect={"y": np.array([[1, 3], [6, 4]], np.float32)}),
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
    Case("reverse/index-f16", ("Reverse", "opset1"), ov_build(_reverse("index", [0, -1]))),
    Case("reverse/mask-f16", ("Reverse", "opset1"), ov_build(_reverse("mask", [False, True, False]))),
    Case("roll/spec-example-2", ("Roll", "opset7"), ov_build(_roll([-1, 2], [0, 1])), inputs=_ROLL_X,
         shapes={"x": (4, 3)}, expect={"y": np.array([[5, 6, 4], [8, 9, 7], [11, 12, 10], [2, 3, 1]], np.int32)},
         source="Roll-7 example 2"),
    Case("roll/spec-example-3-repeated-axis", ("Roll", "opset7"), ov_build(_roll([1, 2, 1], [0, 1, 0])), inputs=_ROLL_X,
         shapes={"x": (4, 3)}, expect={"y": np.array([[8, 9, 7], [11, 12, 10], [2, 3, 1], [5, 6, 4]], np.int32)},
         source="Roll-7 example 3"),
]
