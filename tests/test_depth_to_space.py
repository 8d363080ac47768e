"""DepthToSpace-1 (NCHW and TensorFlow's NHWC / NCHW_VECT_C) and SpaceToDepth-1: the worked
examples, a table over ranks, modes, block sizes, element types, dynamic dims and layouts (each
case pins the lowering it takes), and the validation errors."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, Ir2OnnxError
from ir2onnx.ir.element_types import TYPES as ELEMENT_TYPES
from ir2onnx.testing import assert_bitexact, run_onnx, run_openvino
from test_depth_to_space_util import data, node_types, oracle, ov_safe, path, write_ir

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "depth_to_space"

# specs/DepthToSpace.md, TensorFlow NHWC, block_size 2; inputs hold 1..N
PUBLISHED = {
    "tf_nhwc_example1": [[[[1], [2]], [[3], [4]]]],
    "tf_nhwc_example2": [[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]]],
    "tf_nhwc_example3": [[[[1], [2], [5], [6]], [[3], [4], [7], [8]], [[9], [10], [13], [14]],
                          [[11], [12], [15], [16]]]],
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_tensorflow_worked_examples(name):
    xml = SAMPLES / f"{name}.xml"
    x, y = np.load(SAMPLES / f"{name}_x.npy"), np.load(SAMPLES / f"{name}_y.npy")
    published = np.array(PUBLISHED[name], np.float32)
    assert_bitexact(x, np.arange(1, x.size + 1, dtype=np.float32).reshape(x.shape), "sample input")
    assert_bitexact(y, published, "sample expected output")
    assert_bitexact(run_onnx(xml, [x])[0], published, "onnxruntime")
    assert_bitexact(oracle(xml, x), published, "oracle")


@pytest.mark.parametrize("name,mode", [("ov_blocks_first", "blocks_first"), ("ov_depth_first", "depth_first")])
def test_openvino_samples(name, mode):
    xml = SAMPLES / f"{name}.xml"
    assert f'mode="{mode}"' in xml.read_text()
    x, y = np.load(SAMPLES / f"{name}_x.npy"), np.load(SAMPLES / f"{name}_y.npy")
    assert_bitexact(run_openvino(xml, [x])[0], y, "openvino")
    assert_bitexact(run_onnx(xml, [x])[0], y, "onnxruntime")
    assert_bitexact(oracle(xml, x), y, "oracle")


@pytest.mark.parametrize("op,mode,x,y", [
    # 3-D, bs 2, c' 2: blocks_first reads channel b*c' + c, depth_first c*bs + b (spec)
    ("DepthToSpace", "blocks_first", [[[0], [1], [2], [3]]], [[[0, 2], [1, 3]]]),
    ("DepthToSpace", "depth_first", [[[0], [1], [2], [3]]], [[[0, 1], [2, 3]]]),
    ("SpaceToDepth", "blocks_first", [[[0, 2], [1, 3]]], [[[0], [1], [2], [3]]]),
    ("SpaceToDepth", "depth_first", [[[0, 1], [2, 3]]], [[[0], [1], [2], [3]]]),
])
def test_modes_by_hand(tmp_path, op, mode, x, y):
    x, y = np.array(x, np.float32), np.array(y, np.float32)
    xml = write_ir(tmp_path / "m.xml", op, list(x.shape), {"block_size": 2, "mode": mode})
    assert_bitexact(oracle(xml, x), y, "oracle")
    assert_bitexact(run_onnx(xml, [x])[0], y, "onnxruntime")
    assert_bitexact(run_openvino(xml, [x])[0], y, "openvino")


# ---- the table -----------------------------------------------------------------------------
TYPES = ["i8", "u8", "f16", "f32", "i32", "i64", "boolean"]
ONNX_OP_TYPES = {"i8", "u8", "f32", "f64"}  # not f16: onnxruntime quiets its signalling NaNs
RANKS = {"NCHW": (3, 4, 5), "NHWC": (3, 4, 5), "NCHW_VECT_C": (4, 5)}
DYNAMIC = [(), (0,), "spatial", "all-but-channels"]


def d2s_shape(fmt, rank, bs, cp=2, batch=2):
    k = rank - (3 if fmt == "NCHW_VECT_C" else 2)
    spatial = [2, 3, 1][:k]
    if fmt == "NCHW":
        return [batch, cp * bs**k] + spatial
    if fmt == "NHWC":
        return [batch] + spatial + [cp * bs**k]
    return [batch, bs**k] + spatial + [4]  # NCHW_VECT_C: c' = 4


def dynamic_axes(kind, rank, fmt):
    channel = rank - 1 if fmt == "NHWC" else 1
    if kind == "spatial":
        return tuple(i for i in range(2 if fmt != "NHWC" else 1, rank) if i != channel)[:1] + (0,)
    if kind == "all-but-channels":
        return tuple(i for i in range(rank) if i != channel)
    return kind


def expected_paths(op, fmt, rank, mode, bs, etype, dynamic, out_shape) -> set[str]:
    """The lowerings a case may take: the ONNX operator exactly where onnxruntime has a kernel
    (4-D NCHW, its five types; SpaceToDepth only blocks_first); a Gather of rows only where
    every dim but the batch is static and the output's rows (last axis) are >= 16 bytes, and
    then never two Transposes; nothing at all for block_size 1."""
    if bs == 1:  # NCHW_VECT_C with a dynamic last dim reshapes to [.., 4], checking it is 4
        return {"reshape"} if fmt == "NCHW_VECT_C" and rank - 1 in dynamic else {"identity"}
    if fmt == "NCHW" and rank == 4 and etype in ONNX_OP_TYPES and (op == "DepthToSpace" or mode == "blocks_first"):
        return {"onnx"}
    static = not set(dynamic) - {0}
    if static and out_shape[-1] * ELEMENT_TYPES[etype].bits >= 8 * 16:
        return {"gather", "chain", "reshape"}  # rows already in order: one Transpose or none
    return {"chain", "chain2", "reshape"}


TABLE = []
for _fmt, _ranks in RANKS.items():
    for _rank in _ranks:
        for _mode in ("blocks_first", "depth_first"):
            for _bs in (1, 2, 3, 4):
                _i = len(TABLE)
                TABLE.append((_fmt, _rank, _mode, _bs, TYPES[_i % len(TYPES)], DYNAMIC[_i % len(DYNAMIC)]))


@pytest.mark.parametrize("fmt,rank,mode,bs,etype,dyn", TABLE)
def test_depth_to_space_table(tmp_path, fmt, rank, mode, bs, etype, dyn):
    shape = d2s_shape(fmt, rank, bs)
    x = data(shape, etype, seed=len(shape) * 10 + bs)
    attrs = {"block_size": bs, "mode": mode, "data_format": fmt}
    dyn_axes = dynamic_axes(dyn, rank, fmt)
    xml = write_ir(tmp_path / "m.xml", "DepthToSpace", shape, attrs, etype, dyn_axes)
    expected = oracle(xml, x)
    assert_bitexact(run_onnx(xml, [x])[0], expected, "onnxruntime vs oracle")
    assert path(node_types(xml)) in expected_paths("DepthToSpace", fmt, rank, mode, bs, etype, dyn_axes, expected.shape)
    if fmt == "NCHW":  # OpenVINO knows only this layout
        x = ov_safe(x)
        assert_bitexact(run_openvino(xml, [x])[0], oracle(xml, x), "openvino vs oracle")


@pytest.mark.parametrize("etype", TYPES + ["f64", "i16", "u16", "u32", "u64"])
@pytest.mark.parametrize("fmt", sorted(RANKS))
@pytest.mark.parametrize("mode", ["blocks_first", "depth_first"])
def test_every_type_in_every_layout(tmp_path, etype, fmt, mode):
    shape = d2s_shape(fmt, 4 if fmt != "NCHW_VECT_C" else 5, 2, batch=1)
    x = data(shape, etype, seed=3)
    attrs = {"block_size": 2, "mode": mode, "data_format": fmt}
    xml = write_ir(tmp_path / "m.xml", "DepthToSpace", shape, attrs, etype)
    y = oracle(xml, x)
    assert_bitexact(run_onnx(xml, [x])[0], y, f"{etype} {fmt} {mode}")
    assert path(node_types(xml)) in expected_paths("DepthToSpace", fmt, len(shape), mode, 2, etype, (), y.shape)


@pytest.mark.parametrize("rank", [3, 4, 5])
@pytest.mark.parametrize("mode", ["blocks_first", "depth_first"])
@pytest.mark.parametrize("bs", [1, 2, 3])
@pytest.mark.parametrize("etype", ["f32", "i64", "u8", "boolean"])
def test_space_to_depth_table(tmp_path, rank, mode, bs, etype):
    shape = [2, 3] + [bs * d for d in (2, 1, 3)[: rank - 2]]
    x = data(shape, etype, seed=rank + bs)
    dyn = (0, rank - 1) if bs == 2 else ()
    xml = write_ir(tmp_path / "m.xml", "SpaceToDepth", shape, {"block_size": bs, "mode": mode}, etype, dyn)
    expected = oracle(xml, x)
    assert_bitexact(run_onnx(xml, [x])[0], expected, "onnxruntime vs oracle")
    x = ov_safe(x)
    assert_bitexact(run_openvino(xml, [x])[0], oracle(xml, x), "openvino vs oracle")
    assert path(node_types(xml)) in expected_paths("SpaceToDepth", "NCHW", rank, mode, bs, etype, dyn, expected.shape)


# ---- the paths, spelled out ----------------------------------------------------------------
R, T, G, A, I, C = "Reshape", "Transpose", "Gather", "Add", "Identity", "Concat"
BF, DF = {"block_size": 2, "mode": "blocks_first"}, {"block_size": 2, "mode": "depth_first"}
NHWC, VECT = {"data_format": "NHWC"}, {"data_format": "NCHW_VECT_C"}


@pytest.mark.parametrize("op,shape,attrs,etype,nodes", [
    # 4-D NCHW of the types onnxruntime moves bit-exactly: its own operator, DCR / CRD
    ("DepthToSpace", [1, 8, 2, 3], BF, "f32", ["DepthToSpace", I]),
    ("DepthToSpace", [None, 8, None, 3], DF, "u8", ["DepthToSpace", I]),
    ("SpaceToDepth", [1, 2, 4, 6], BF, "f64", ["SpaceToDepth", I]),
    # f16: onnxruntime's kernels quiet signalling NaNs, so the chain moves it
    ("SpaceToDepth", [1, 2, 4, 6], BF, "f16", [R, T, R, T, R, I]),
    # static but the batch, rows >= 16 bytes: a matrix transpose (when the last block axis must
    # join the rows) then a Gather of rows
    ("DepthToSpace", [1, 8, 2, 3], DF, "i32", [R, T, R, A, G, I]),
    ("DepthToSpace", [None, 8, 2, 32], BF, "i64", [R, T, R, A, G, I]),
    ("DepthToSpace", [1, 16, 2, 3, 2], DF, "f32", [R, T, R, A, A, G, I]),
    # rows of W >= 16 bytes ending in a block axis, 1/2/4-byte elements: one Gather per phase,
    # a Concat interleaves them (no MLAS transpose with 2 rows)
    ("DepthToSpace", [None, 8, 2, 32], BF, "boolean", [R, A, G, A, G, C, R, I]),
    ("DepthToSpace", [1, 16, 2, 3, 4], DF, "f32", [R, A, A, G, A, A, G, C, R, I]),
    ("DepthToSpace", [1, 27, 2, 3, 8], {"block_size": 3, "mode": "blocks_first"}, "f16",
     [R, A, A, G, A, A, G, A, A, G, C, R, I]),
    ("DepthToSpace", [1, 2, 3, 16], {**BF, **NHWC}, "f32", [R, A, G, I]),
    ("DepthToSpace", [None, 2, 3, 2, 128], {**BF, **NHWC}, "u8", [R, A, A, G, I]),
    ("DepthToSpace", [1, 2, 3, 16], {**DF, **NHWC}, "f32", [R, T, R, A, G, I]),
    ("DepthToSpace", [1, 4, 2, 3, 4], {**BF, **VECT}, "f32", [R, A, A, G, I]),
    ("SpaceToDepth", [1, 2, 4, 64], DF, "f16", [R, T, R, A, G, I]),
    # dynamic dims or short rows: the chain, two Transposes where one would copy element-wise
    ("DepthToSpace", [1, 8, None, 32], BF, "i32", [R, T, R, T, R, I]),
    ("DepthToSpace", [1, 16, 2, 3, 2], DF, "i8", [R, T, R, T, R, I]),
    ("DepthToSpace", [1, 8, 3], BF, "f32", [R, T, R, I]),
    ("DepthToSpace", [1, 2, 3, 8], {**BF, **NHWC}, "f32", [R, T, R, I]),
    ("DepthToSpace", [None, 2, 3, 8], {**DF, **NHWC}, "f32", [R, T, R, T, R, I]),
    ("DepthToSpace", [1, 4, 2, 3, 4], {**DF, **VECT}, "i8", [R, T, R, R, T, R, I]),
    ("SpaceToDepth", [1, 2, 4, 6], DF, "f16", [R, T, R, T, R, I]),
    # no element moves
    ("DepthToSpace", [1, 8, 2, 3], {"block_size": 1, "mode": "depth_first"}, "f32", [I]),
    ("DepthToSpace", [1, 1, 1, 4], {**BF, **NHWC}, "f32", [R, I]),
    ("DepthToSpace", [1, 5, 1, 64], {**BF, **NHWC}, "u8", [R, I]),
])
def test_lowering_path(tmp_path, op, shape, attrs, etype, nodes):
    dynamic = [i for i, d in enumerate(shape) if d is None]
    shape = [2 if d is None else d for d in shape]
    xml = write_ir(tmp_path / "m.xml", op, shape, attrs, etype, dynamic)
    model = convert(xml)
    assert [n.op_type for n in model.graph.node] == nodes
    for n in model.graph.node:
        if n.op_type == "DepthToSpace":
            mode = next(a.s.decode() for a in n.attribute if a.name == "mode")
            assert mode == {"blocks_first": "DCR", "depth_first": "CRD"}[attrs["mode"]]
    x = data(shape, etype)
    assert_bitexact(run_onnx(xml, [x])[0], oracle(xml, x))


# ---- validation ----------------------------------------------------------------------------
@pytest.mark.parametrize("op,shape,attrs,error,words", [
    ("DepthToSpace", [1, 6, 2, 2], {"block_size": 2}, InvalidLayer, "6 channels are not divisible by block_size^2 = 4"),
    ("DepthToSpace", [1, 2, 2, 6], {"block_size": 2, "data_format": "NHWC"}, InvalidLayer, "not divisible"),
    ("DepthToSpace", [1, 2, 2, 2, 4], {"block_size": 3, "data_format": "NCHW_VECT_C"}, InvalidLayer,
     "8 channels are not divisible by block_size^2 = 9"),
    ("DepthToSpace", [1, 6, 2, 2, 4], {"block_size": 2, "data_format": "NCHW_VECT_C"}, InvalidLayer,
     "output channels (6) that are a multiple of 4"),
    ("DepthToSpace", [1, 2, 2, 2, 4], {"block_size": 2, "data_format": "NCHW_VECT_C"}, InvalidLayer,
     "multiple of 4"),
    ("DepthToSpace", [1, 16, 2, 2, 3], {"block_size": 2, "data_format": "NCHW_VECT_C"}, InvalidLayer,
     "the last dim must be 4"),
    ("DepthToSpace", [1, 4, 4], {"block_size": 2, "data_format": "NCHW_VECT_C"}, InvalidLayer, "needs rank >= 4"),
    ("DepthToSpace", [1, 4, 2], {"block_size": 0}, InvalidLayer, "block_size must be an integer >= 1"),
    ("DepthToSpace", [1, 4, 2], {"block_size": -2}, InvalidLayer, "block_size must be an integer >= 1"),
    ("DepthToSpace", [1, 4, 2], {"block_size": 2, "mode": "columns_first"}, InvalidLayer,
     "mode='columns_first' is not one of: blocks_first, depth_first"),
    ("DepthToSpace", [1, 4, 2], {"block_size": 2, "data_format": "NDHWC"}, InvalidLayer,
     "data_format='NDHWC' is not one of"),
    ("DepthToSpace", [4, 4], {"block_size": 2}, InvalidLayer, "has rank 2; NCHW needs rank >= 3"),
    ("DepthToSpace", [4, 4], {"block_size": 2, "data_format": "NHWC"}, InvalidLayer, "needs rank >= 3"),
    ("SpaceToDepth", [1, 1, 4, 5], {"block_size": 2}, InvalidLayer, "spatial dim 3 (5) is not divisible"),
    ("SpaceToDepth", [1, 4], {"block_size": 2}, InvalidLayer, "needs rank >= 3"),
    ("SpaceToDepth", [1, 1, 4], {"block_size": 0}, InvalidLayer, "block_size must be"),
    ("SpaceToDepth", [1, 1, 4], {"block_size": 2, "mode": "x"}, InvalidLayer, "is not one of"),
    ("SpaceToDepth", [1, 4, 4, 1], {"block_size": 2, "data_format": "NHWC"}, InvalidLayer,
     "data_format 'NHWC' is not defined for SpaceToDepth"),
])
def test_invalid_layers_are_refused_naming_the_layer(tmp_path, op, shape, attrs, error, words):
    xml = write_ir(tmp_path / "bad.xml", op, shape, attrs)
    with pytest.raises(error) as e:
        convert(xml)
    assert "under_test" in str(e.value) and op in str(e.value), str(e.value)
    assert words in str(e.value), str(e.value)
    if "is not one of" not in words:  # the reader refuses unknown values before any oracle runs
        with pytest.raises(InvalidLayer):
            oracle(xml, np.zeros([max(d, 1) for d in shape], np.float32))


def test_declared_output_shape_must_agree(tmp_path):
    xml = write_ir(tmp_path / "bad.xml", "DepthToSpace", [1, 8, 2, 3], {"block_size": 2}, out_shape=[1, 2, 4, 5])
    with pytest.raises(InvalidLayer, match=r"declared \[1,2,4,5\], the op gives \[1,2,4,6\]"):
        convert(xml)


def test_dynamic_rank_is_unsupported(tmp_path):
    xml = write_ir(tmp_path / "m.xml", "DepthToSpace", None, {"block_size": 2})
    with pytest.raises(InvalidLayer, match="dynamic rank|rank must be known"):
        convert(xml)


def test_missing_mode_means_blocks_first_like_openvino(tmp_path):
    xml = write_ir(tmp_path / "m.xml", "DepthToSpace", [1, 8, 1, 1], {"block_size": 2})
    x = np.arange(8, dtype=np.float32).reshape(1, 8, 1, 1)
    expected = run_openvino(xml, [x])[0]
    assert expected.ravel().tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert_bitexact(run_onnx(xml, [x])[0], expected)
    assert_bitexact(oracle(xml, x), expected)


def test_runtime_channels_not_divisible_fail_loudly(tmp_path):
    """A dynamic channel dim is checked by onnxruntime at run time (no silent result)."""
    for shape, fmt, wrong in (([1, 8, 3], "NCHW", 5), ([1, 8, 2, 3], "NCHW", 6), ([1, 2, 8], "NHWC", 5),
                              ([2, 8, 2, 1, 3], "NCHW", 12)):
        axis = len(shape) - 1 if fmt == "NHWC" else 1
        xml = write_ir(tmp_path / "m.xml", "DepthToSpace", shape, {"block_size": 2, "data_format": fmt},
                       dynamic=(axis,))
        good = data(shape, "f32")
        assert_bitexact(run_onnx(xml, [good])[0], oracle(xml, good))
        bad = np.zeros([wrong if i == axis else d for i, d in enumerate(shape)], np.float32)
        with pytest.raises(Ir2OnnxError, match="onnxruntime failed"):
            run_onnx(xml, [bad])


def test_vect_c_with_dynamic_last_dim_checks_it_at_run_time(tmp_path):
    shape = [1, 4, 2, 1, 4]
    xml = write_ir(tmp_path / "m.xml", "DepthToSpace", shape, {"block_size": 2, "data_format": "NCHW_VECT_C"},
                   "i8", dynamic=(4,))
    x = data(shape, "i8")
    assert_bitexact(run_onnx(xml, [x])[0], oracle(xml, x))
    with pytest.raises(Ir2OnnxError, match="onnxruntime failed"):
        run_onnx(xml, [np.zeros([1, 4, 2, 1, 3], np.int8)])


@pytest.mark.parametrize("op,shape,attrs", [
    ("DepthToSpace", [1, 4, 2**30, 8], {"block_size": 2, "mode": "depth_first"}),
    ("DepthToSpace", [None, 8, 2**28, 2, 8], {"block_size": 2, "mode": "blocks_first"}),
    ("SpaceToDepth", [1, 4, 2**29, 16], {"block_size": 2, "mode": "blocks_first"}),
])
def test_huge_dims_convert_without_index_tables(tmp_path, op, shape, attrs):
    """Regression: the row Gather built one index table per output axis at convert time, so a
    valid i32 layer with a huge static dim died with MemoryError (exit 3, "internal error").
    Past depth_to_space_move.MAX_TABLE_ELEMENTS the Reshape/Transpose chain is used instead."""
    dynamic = [i for i, d in enumerate(shape) if d is None]
    xml = write_ir(tmp_path / "m.xml", op, [2 if d is None else d for d in shape], attrs, "i32", dynamic)
    model = convert(xml)
    assert path([n.op_type for n in model.graph.node]).startswith("chain")
    assert model.ByteSize() < 4096


def test_index_table_limit_falls_back_to_the_chain(tmp_path, monkeypatch):
    """Just past the limit the chain is chosen, and it is bit exact with the oracle and OpenVINO."""
    import ir2onnx.ops._depth_to_space_rows as move_mod  # (the Gather formulations read the limit)

    shape, attrs = [2, 8, 3, 5], {"block_size": 2, "mode": "depth_first"}
    xml = write_ir(tmp_path / "m.xml", "DepthToSpace", shape, attrs, "i32")
    assert path(node_types(xml)) == "gather"  # tables: 2 channels + 6 rows
    monkeypatch.setattr(move_mod, "MAX_TABLE_ELEMENTS", 7)
    assert path(node_types(xml)).startswith("chain")
    x = data(shape, "i32")
    assert_bitexact(run_onnx(xml, [x])[0], oracle(xml, x))
    assert_bitexact(run_openvino(xml, [x])[0], oracle(xml, x))
    monkeypatch.setattr(move_mod, "MAX_TABLE_ELEMENTS", 8)
    assert path(node_types(xml)) == "gather"


@pytest.mark.parametrize("op,shape", [("DepthToSpace", [1, 4, 1, 2]), ("SpaceToDepth", [1, 1, 2, 4])])
def test_f16_nan_payloads_move_bit_exactly(tmp_path, op, shape):
    """onnxruntime's f16 DepthToSpace/SpaceToDepth kernels go through float and quiet signalling
    NaNs (found by the round-trip property test); the converter must not use them for f16."""
    # signalling NaNs (quiet bit 0x0200 clear) with payloads, both signs: a float round trip quiets them
    bits = np.array([0x7C01, 0x7D00, 0xFC05, 0x7C10, 0xFD55, 0x7E01, 0x7DFF, 0xFC01], np.uint16)
    x = bits.view(np.float16).reshape(shape)
    xml = write_ir(tmp_path / "m.xml", op, shape, {"block_size": 2, "mode": "blocks_first"}, "f16")
    (y,) = run_onnx(xml, [x])
    assert_bitexact(y, oracle(xml, x))
    assert np.isnan(y).all()
