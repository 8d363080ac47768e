"""Selftest cases of ExtractImagePatches-3 (the spec's five worked examples: a 1 x 1 x 10 x 10 image
of 1 .. 100, and a 1 x 2 x 5 x 5 one of 1 .. 50) and Col2Im-15 (overlap counts worked by hand)."""
from __future__ import annotations

import numpy as np

from .cases import Case, iota, ov_build, param


def _eip(shape, sizes, strides, rates, auto_pad):
    def make(ops):
        import openvino.opset3 as o3

        x = param(ops, [None] + list(shape[1:]))
        return [(o3.extract_image_patches(x, sizes, strides, rates, auto_pad), "y")], [x]
    return make


_EX3 = [[[0, 0], [0, 89]], [[0, 0], [81, 90]], [[0, 0], [82, 0]], [[0, 0], [83, 0]], [[0, 9], [0, 99]],
        [[1, 10], [91, 100]], [[2, 0], [92, 0]], [[3, 0], [93, 0]], [[0, 19], [0, 0]], [[11, 20], [0, 0]],
        [[12, 0], [0, 0]], [[13, 0], [0, 0]], [[0, 29], [0, 0]], [[21, 30], [0, 0]], [[22, 0], [0, 0]], [[23, 0], [0, 0]]]


def _case(n, shape, sizes, strides, rates, pad, expect):
    image = iota(shape)
    return Case(f"extractimagepatches/spec-example-{n}", ("ExtractImagePatches", "opset3"),
                ov_build(_eip(shape, sizes, strides, rates, pad)), inputs={"x": image},
                expect={"y": np.asarray(expect, np.float32)[None]},
                source=f"ExtractImagePatches-3 example {n}: sizes {sizes}, strides {strides}, rates {rates}, {pad}")


def _col2im(shape, size, kernel, dtype=np.float32, **attrs):
    def make(ops):
        x = param(ops, shape, dtype)
        node = ops.col2im(x, ops.constant(np.array(size, np.int64)), ops.constant(np.array(kernel, np.int64)), **attrs)
        return [(node, "y")], [x]
    return make


CASES = [
    Case("col2im/overlap-counts", ("Col2Im", "opset15"), ov_build(_col2im([1, 4, 4], [3, 3], [2, 2])),
         inputs={"x": np.ones((1, 4, 4), np.float32)}, min_opset=16,
         expect={"y": np.array([[[[1, 2, 1], [2, 4, 2], [1, 2, 1]]]], np.float32)},
         source="Col2Im-15: 2 x 2 blocks of ones, stride 1, into 3 x 3: each pixel counts its blocks"),
    Case("col2im/unbatched-i32-stride-pads", ("Col2Im", "opset15"),
         ov_build(_col2im([None, 4], [3, 3], [2, 2], np.int32, strides=[2, 2], pads_begin=[1, 1], pads_end=[0, 0])),
         inputs={"x": np.arange(1, 17, dtype=np.int32).reshape(4, 4)}, min_opset=16,
         expect={"y": np.array([[[13, 10, 14], [7, 4, 8], [15, 12, 16]]], np.int32)}, source="Col2Im-15 unbatched: 4 blocks of 2 x 2, stride 2, pad 1 at the start, no overlaps"),
    _case(1, (1, 1, 10, 10), [3, 3], [5, 5], [1, 1], "valid",
          [[[r + 10 * i + j, r + 10 * i + j + 5], [r + 10 * i + j + 50, r + 10 * i + j + 55]]
           for i in range(3) for j in range(3) for r in [1]]),
    _case(2, (1, 1, 10, 10), [4, 4], [8, 8], [1, 1], "valid", [[[1 + 10 * i + j]] for i in range(4) for j in range(4)]),
    _case(3, (1, 1, 10, 10), [4, 4], [9, 9], [1, 1], "same_upper", _EX3),
    _case(4, (1, 1, 10, 10), [3, 3], [5, 5], [2, 2], "valid",
          [[[1 + 20 * i + 2 * j, 6 + 20 * i + 2 * j], [51 + 20 * i + 2 * j, 56 + 20 * i + 2 * j]]
           for i in range(3) for j in range(3)]),
    _case(5, (1, 2, 5, 5), [2, 2], [3, 3], [1, 1], "valid",
          [[[1 + 5 * i + j + 25 * c, 4 + 5 * i + j + 25 * c], [16 + 5 * i + j + 25 * c, 19 + 5 * i + j + 25 * c]]
           for i in range(2) for j in range(2) for c in range(2)]),
]
