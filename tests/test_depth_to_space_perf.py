"""DepthToSpace / SpaceToDepth: the lowering never picks a Transpose that onnxruntime 1.31 runs in
its pathological multi-threaded regime (one MLAS matrix transpose per outer index, each handed to
the thread pool: 13 ms on one thread, 280 ms on two for a 64 MiB NHWC depth_first layer; see
benchmarks/bench_depth_to_space.py), and the formulations chosen instead stay bit-exact."""
from __future__ import annotations

import onnx
import pytest

from ir2onnx.api import convert
from ir2onnx.ir.element_types import TYPES
from ir2onnx.ops._depth_to_space_move import slow_transpose
from ir2onnx.testing import assert_bitexact, run_onnx
from test_depth_to_space_util import data, oracle, path, write_ir


@pytest.mark.parametrize("perm,sizes,bits,slow", [
    ([0, 2, 1], [262144, 16, 4], 32, True),  # the NHWC depth_first matrix transpose per pixel
    ([0, 2, 1], [65536, 16, 4], 8, True),  # u8 and f16 take the same MLAS path
    ([0, 2, 1], [65536, 16, 4], 16, True),
    ([0, 2, 1], [65536, 16, 4], 64, False),  # 8-byte elements: a plain loop, no thread pool
    ([0, 2, 1], [1, 1048576, 4], 32, False),  # one large matrix: the fast way to move it
    ([0, 2, 1], [32, 4096, 128], 32, False),
    ([0, 2, 1, 3], [4096, 16, 4, 4], 32, False),  # moved pieces of 16 bytes: memcpy, no MLAS
    ([0, 2, 1, 3], [4096, 16, 4, 1], 32, True),  # (size-1 axes do not change the pieces)
    ([0, 2, 3, 1], [4096, 2, 16, 16], 32, True),  # moved inwards to the end
    ([0, 2, 3, 1], [4096, 2, 64, 64], 32, False),  # matrices of 8192 elements: dispatch is cheap
    ([0, 2, 1], [None, 16, 4], 32, False),  # an unknown batch counts as 1
    ([0, 2, 1], [63, 16, 4], 32, False),  # few matrices
    ([1, 0, 2], [262144, 16, 4], 32, False),  # whole rows of 16 bytes
    ([0, 3, 1, 2], [4096, 4, 4, 4], 32, True),
    ([0, 2, 3, 1], [4096, 4, 4, 4], 32, True),
    ([0, 3, 2, 1], [4096, 4, 4, 4], 32, False),  # not a single-axis move: the general loop
])
def test_slow_transpose_model(perm, sizes, bits, slow):
    assert slow_transpose(perm, sizes, bits) is slow


BF, DF = {"block_size": 2, "mode": "blocks_first"}, {"block_size": 2, "mode": "depth_first"}
NHWC, VECT = {"data_format": "NHWC"}, {"data_format": "NCHW_VECT_C"}


def _transposes(model):
    """(perm, input shape) of every Transpose of the model (shapes from ONNX shape inference)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value if d.HasField("dim_value") else None for d in v.type.tensor_type.shape.dim]
              for v in list(inferred.graph.value_info) + list(inferred.graph.input)}
    for n in inferred.graph.node:
        if n.op_type == "Transpose":
            yield list(next(a.ints for a in n.attribute if a.name == "perm")), shapes[n.input[0]]


@pytest.mark.parametrize("op,shape,attrs,etype,want", [
    # NHWC depth_first: the block axes move to the front in one matrix transpose (not one small
    # matrix per pixel), then a Gather of the channel rows
    ("DepthToSpace", [1, 16, 16, 16], {**DF, **NHWC}, "f32", "gather"),
    ("DepthToSpace", [2, 16, 8, 64], {**DF, **NHWC}, "u8", "gather"),
    ("DepthToSpace", [1, 16, 16, 32], {**DF, **NHWC}, "f16", "gather"),
    ("DepthToSpace", [1, 16, 16, 16], {**DF, **NHWC}, "i64", "gather"),
    # short rows: the chain, and no slow step in it
    ("DepthToSpace", [1, 32, 32, 8], {**DF, **NHWC}, "f32", "chain"),
    ("DepthToSpace", [1, 32, 32, 8], {**DF, **NHWC}, "u8", "chain"),
    ("DepthToSpace", [1, 32, 32, 8], {**BF, **NHWC}, "u8", "chain"),
    # SpaceToDepth: the block axis behind the rows moves to the front
    ("SpaceToDepth", [1, 4, 32, 64], DF, "i32", "gather"),
    ("SpaceToDepth", [2, 2, 16, 16, 32], BF, "u8", "gather"),
    ("SpaceToDepth", [1, 2, 16, 16, 32], BF, "f32", "gather"),
    # NCHW with rows of W ending in the block axis: phases + Concat (1, 2, 4 bytes) or one
    # Transpose of 8-byte elements (a plain loop in onnxruntime) + Gather
    ("DepthToSpace", [1, 32, 8, 8, 8], BF, "f32", "gather"),
    ("DepthToSpace", [1, 32, 8, 8, 8], DF, "i64", "gather"),
    ("DepthToSpace", [1, 16, 32, 32], DF, "i32", "gather"),
    ("DepthToSpace", [1, 8, 16, 8, 4], {**DF, **VECT}, "u8", "chain2"),
    ("DepthToSpace", [1, 8, 16, 8, 4], {**BF, **VECT}, "f32", "gather"),
])
def test_no_slow_transpose_is_chosen(tmp_path, op, shape, attrs, etype, want):
    xml = write_ir(tmp_path / "m.xml", op, shape, attrs, etype)
    model = convert(xml)
    assert path([n.op_type for n in model.graph.node]).startswith(want)
    for perm, sizes in _transposes(model):
        assert not slow_transpose(perm, sizes, TYPES[etype].bits), (perm, sizes)
    x = data(shape, etype, seed=5)
    assert_bitexact(run_onnx(xml, [x])[0], oracle(xml, x), f"{op} {shape} {attrs} {etype}")
