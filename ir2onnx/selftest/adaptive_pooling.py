"""Selftest cases of AdaptiveAvgPool-8 and AdaptiveMaxPool-8: overlapping bins of unequal length
(7 -> 3: 0..3, 2..5, 4..7), a dynamic spatial dim, a run-time output_size, both max outputs."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, iota, ov_build, param

AAP, AMP = ("AdaptiveAvgPool", "opset8"), ("AdaptiveMaxPool", "opset8")


def _avg(shape, out, dtype=np.float32):
    def make(ops):
        import openvino.opset8 as o8

        x = param(ops, shape, dtype)
        return [(o8.adaptive_avg_pool(x, const(ops, out, np.int32)), "y")], [x]
    return make


def _max(shape, out, index_type="i32", run_time=False):
    def make(ops):
        import openvino.opset8 as o8

        x = param(ops, shape)
        size = param(ops, [len(out)], np.int32, "size") if run_time else const(ops, out)
        node = o8.adaptive_max_pool(x, size, index_type)
        return [(node.output(0), "y"), (node.output(1), "indices")], [x] + ([size] if run_time else [])
    return make


CASES = [
    Case("adaptiveavgpool8/1d-7-to-3", AAP, ov_build(_avg([1, 1, 7], [3])), exact=False,
         inputs={"x": iota((1, 1, 7))}, expect={"y": np.array([[[2, 4, 6]]], np.float32)},
         source="AdaptiveAvgPool-8: bins floor(i*7/3)..ceil((i+1)*7/3) = 0..3, 2..5, 4..7"),
    Case("adaptiveavgpool8/2d-dynamic", AAP, ov_build(_avg([None, 2, None, None], [3, 2])), exact=False,
         shapes={"x": (2, 2, 5, 7)}, expect={"y": (2, 2, 3, 2)}),
    Case("adaptiveavgpool8/global", AAP, ov_build(_avg([2, 3, 4, 5], [1, 1])), exact=False, expect={"y": (2, 3, 1, 1)}),
    Case("adaptivemaxpool8/1d-7-to-3", AMP, ov_build(_max([1, 1, 7], [3])),
         inputs={"x": np.array([[[1, 5, 2, 5, 3, 0, 4]]], np.float32)},
         expect={"y": np.array([[[5, 5, 4]]], np.float32), "indices": np.array([[[1, 3, 6]]], np.int32)},
         source="AdaptiveMaxPool-8: the first largest element of a bin; overlapping bins"),
    Case("adaptivemaxpool8/i64-indices", AMP, ov_build(_max([2, 3, 6, 5], [4, 3], "i64")), openvino=False,
         expect={"y": (2, 3, 4, 3), "indices": (2, 3, 4, 3)},
         source="AdaptiveMaxPool-8 with index_element_type i64 (OpenVINO's CPU plugin refuses to load it)"),
    Case("adaptivemaxpool8/3d-run-time-size", AMP, ov_build(_max([1, 2, None, 5, None], [2, 3, 2], run_time=True)),
         inputs={"size": np.array([2, 3, 2], np.int32)}, shapes={"x": (1, 2, 3, 5, 4)},
         expect={"y": (1, 2, 2, 3, 2), "indices": (1, 2, 2, 3, 2)},
         source="AdaptiveMaxPool-8: indices flattened over D*H*W"),
]
