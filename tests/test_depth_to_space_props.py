"""DepthToSpace / SpaceToDepth: properties (round trips, lowering == oracle on random layers),
OpenVINO-written IR against the OpenVINO runtime, dynamic dims at several sizes, opsets,
constant folding."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ir2onnx.runtime import sessions as runtime
from ir2onnx.api import convert
from ir2onnx.ir.element_types import TYPES
from ir2onnx.ir.reader import load_ir
from ir2onnx.oracles.registry import oracle_for
from ir2onnx.testing import IRWriter, assert_bitexact, run_onnx, run_openvino
from test_depth_to_space_util import data, node_types, oracle, ov_safe, path, write_ir

MODES = ("blocks_first", "depth_first")


def _round_trip_ir(path, shape, bs, mode, etype):
    """x -> SpaceToDepth -> DepthToSpace -> y, and z -> DepthToSpace -> SpaceToDepth -> w."""
    k = len(shape) - 2
    w = IRWriter("round_trip")
    x = w.parameter(list(shape), etype, "x")
    s2d_shape = [shape[0], shape[1] * bs**k] + [d // bs for d in shape[2:]]
    (s,) = w.layer("SpaceToDepth", "opset1", [x], {"block_size": bs, "mode": mode}, [(etype, s2d_shape)])
    (y,) = w.layer("DepthToSpace", "opset1", [s], {"block_size": bs, "mode": mode}, [(etype, list(shape))],
                   out_names=["y"])
    z = w.parameter(s2d_shape, etype, "z")
    (d,) = w.layer("DepthToSpace", "opset1", [z], {"block_size": bs, "mode": mode}, [(etype, list(shape))])
    (v,) = w.layer("SpaceToDepth", "opset1", [d], {"block_size": bs, "mode": mode}, [(etype, s2d_shape)],
                   out_names=["v"])
    w.result(y, "y")
    w.result(v, "v")
    return w.save(path), s2d_shape


@st.composite
def round_trips(draw):
    k = draw(st.integers(1, 3))
    bs = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 2)), draw(st.integers(1, 3))] + [bs * draw(st.integers(1, 2)) for _ in range(k)]
    return shape, bs, draw(st.sampled_from(MODES)), draw(st.sampled_from(["f32", "f16", "u8", "i64", "boolean"]))


@given(round_trips())
def test_depth_to_space_inverts_space_to_depth(tmp_path_factory, case):
    shape, bs, mode, etype = case
    xml, s2d_shape = _round_trip_ir(tmp_path_factory.mktemp("rt") / "rt.xml", shape, bs, mode, etype)
    x, z = data(shape, etype, seed=1), data(s2d_shape, etype, seed=2)
    y, v = run_onnx(xml, {"x": x, "z": z})
    assert_bitexact(y, x, "DepthToSpace(SpaceToDepth(x))")
    assert_bitexact(v, z, "SpaceToDepth(DepthToSpace(z))")
    layers = {l.name: l for l in load_ir(xml).order}
    s2d = next(l for l in layers.values() if l.type == "SpaceToDepth" and l.outputs[0].names != ("v",))
    d2s = next(l for l in layers.values() if l.type == "DepthToSpace" and l.outputs[0].names == ("y",))
    mid = oracle_for("SpaceToDepth", "opset1")(s2d, [x])[0]
    assert_bitexact(oracle_for("DepthToSpace", "opset1")(d2s, [mid])[0], x, "oracles")


@st.composite
def d2s_layers(draw):
    fmt = draw(st.sampled_from(["NCHW", "NHWC", "NCHW_VECT_C"]))
    k = draw(st.integers(1, 3))
    bs = draw(st.integers(1, 3))
    cp = 4 * draw(st.integers(1, 2)) if fmt == "NCHW_VECT_C" else draw(st.integers(1, 3))
    spatial = [draw(st.integers(1, 3)) for _ in range(k)]
    n = draw(st.integers(0, 2))
    shape = {"NCHW": [n, cp * bs**k] + spatial, "NHWC": [n] + spatial + [cp * bs**k],
             "NCHW_VECT_C": [n, cp // 4 * bs**k] + spatial + [4]}[fmt]
    dynamic = draw(st.sets(st.integers(0, len(shape) - 1)))
    return fmt, shape, bs, draw(st.sampled_from(MODES)), draw(st.sampled_from(["f32", "i8", "i32"])), dynamic


@given(d2s_layers())
def test_lowering_equals_oracle(tmp_path_factory, case):
    fmt, shape, bs, mode, etype, dynamic = case
    xml = write_ir(tmp_path_factory.mktemp("d2s") / "m.xml", "DepthToSpace", shape,
                   {"block_size": bs, "mode": mode, "data_format": fmt}, etype, dynamic)
    x = data(shape, etype, seed=5)
    assert_bitexact(run_onnx(xml, [x])[0], oracle(xml, x), str(case))


@st.composite
def s2d_layers(draw):
    k, bs = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    shape = [draw(st.integers(0, 2)), draw(st.integers(1, 3))] + [bs * draw(st.integers(1, 4)) for _ in range(k)]
    dynamic = draw(st.sets(st.integers(0, len(shape) - 1)))
    return shape, bs, draw(st.sampled_from(MODES)), draw(st.sampled_from(["f32", "u8", "i64"])), dynamic


@given(s2d_layers())
def test_space_to_depth_lowering_equals_oracle(tmp_path_factory, case):
    shape, bs, mode, etype, dynamic = case
    xml = write_ir(tmp_path_factory.mktemp("s2d") / "m.xml", "SpaceToDepth", shape,
                   {"block_size": bs, "mode": mode}, etype, dynamic)
    x = data(shape, etype, seed=6)
    assert_bitexact(run_onnx(xml, [x])[0], oracle(xml, x), str(case))


# ---- OpenVINO-written IR ---------------------------------------------------------------------
def _ov_ir(path, op, shape, mode, bs, dtype):
    import openvino as ov
    import openvino.opset15 as ops

    p = ops.parameter(shape, dtype, name="x")
    node = (ops.depth_to_space if op == "DepthToSpace" else ops.space_to_depth)(p, mode, bs)
    node.output(0).get_tensor().set_names({"y"})
    ov.save_model(ov.Model([ops.result(node)], [p], "m"), str(path), compress_to_fp16=False)
    return path


OV_CASES = [  # op, IR shape (-1: dynamic), feed shape, block size, element type
    ("DepthToSpace", [-1, 8, 5], [3, 8, 5], 2, "f32"),
    ("DepthToSpace", [1, 18, -1, 2], [1, 18, 3, 2], 3, "f16"),
    ("DepthToSpace", [2, 8, 2, 3], [2, 8, 2, 3], 2, "i32"),
    ("DepthToSpace", [-1, 16, 2, -1, 3], [2, 16, 2, 1, 3], 2, "u8"),
    ("DepthToSpace", [1, 27, 1, 2, 2], [1, 27, 1, 2, 2], 3, "boolean"),
    ("DepthToSpace", [1, 4, 2, 2], [1, 4, 2, 2], 1, "i64"),
    ("SpaceToDepth", [-1, 3, 6], [2, 3, 6], 3, "f32"),
    ("SpaceToDepth", [1, 2, -1, 6], [1, 2, 4, 6], 2, "i8"),
    ("SpaceToDepth", [1, 2, 4, 2, 6], [1, 2, 4, 2, 6], 2, "i64"),
    ("SpaceToDepth", [2, 1, 3, 3], [2, 1, 3, 3], 3, "boolean"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op,ir_shape,shape,bs,etype", OV_CASES)
def test_openvino_written_ir_matches_openvino(tmp_path, op, ir_shape, shape, bs, etype, mode):
    xml = _ov_ir(tmp_path / "m.xml", op, ir_shape, mode, bs, TYPES[etype].numpy)
    x = ov_safe(data(shape, etype, seed=9))
    expected = run_openvino(xml, [x])[0]
    assert_bitexact(run_onnx(xml, [x])[0], expected, "onnxruntime vs openvino")
    assert_bitexact(oracle(xml, x), expected, "oracle vs openvino")


# ---- dynamic dims, opsets, folding -------------------------------------------------------------
@pytest.mark.parametrize("opset", [14, 17, 21])
@pytest.mark.parametrize("fmt,ir_shape,feeds", [
    ("NCHW", [None, 8, None, 3], [(1, 8, 2, 3), (3, 8, 5, 3), (0, 8, 2, 3)]),
    ("NCHW", [None, None, 2, None, 32], [(1, 16, 2, 1, 32), (2, 8, 2, 3, 32)]),
    ("NHWC", [None, None, None, 12], [(1, 2, 3, 12), (2, 1, 4, 12), (0, 1, 1, 12)]),
    ("NHWC", [None, 2, 3, 16], [(1, 2, 3, 16), (3, 2, 3, 16), (0, 2, 3, 16)]),  # blocks_first: Gather
    ("NCHW_VECT_C", [None, 4, None, None, 4], [(1, 4, 1, 2, 4), (2, 4, 3, 1, 4)]),
])
def test_one_model_runs_at_several_sizes(tmp_path, opset, fmt, ir_shape, feeds):
    """Dynamic dims: the chain computes its shapes in the graph; one session, many sizes."""
    for mode in MODES:
        dyn = [i for i, d in enumerate(ir_shape) if d is None]
        shape = [1 if d is None else d for d in ir_shape]
        xml = write_ir(tmp_path / f"{mode}.xml", "DepthToSpace", shape,
                       {"block_size": 2, "mode": mode, "data_format": fmt}, "f32", dyn)
        sess = runtime.session(convert(xml, opset=opset).SerializeToString())
        for feed in feeds:
            x = data(feed, "f32", seed=sum(feed))
            assert_bitexact(sess.run(None, {"x": x})[0], oracle(xml, x), f"{fmt} {mode} {feed}")


def test_constant_input_is_folded(tmp_path):
    w = IRWriter("folded")
    c = w.const(np.arange(48, dtype=np.int32).reshape(1, 8, 2, 3))
    (y,) = w.layer("DepthToSpace", "opset1", [c], {"block_size": 2, "mode": "depth_first"},
                   [("i32", [1, 2, 4, 6])], out_names=["y"])
    w.result(y, "y")
    xml = w.save(tmp_path / "folded.xml")
    model = convert(xml)
    assert [n.op_type for n in model.graph.node] == ["Identity"]
    g = load_ir(xml)
    d2s = next(l for l in g.order if l.type == "DepthToSpace")
    expected = oracle_for("DepthToSpace", "opset1")(d2s, [np.arange(48, dtype=np.int32).reshape(1, 8, 2, 3)])[0]
    assert_bitexact(run_onnx(xml, {})[0], expected)


def test_large_constant_input_is_not_folded(tmp_path):
    w = IRWriter("big")
    value = np.arange(2 * 8 * 32 * 32, dtype=np.float32).reshape(2, 8, 32, 32)
    c = w.const(value)
    (y,) = w.layer("DepthToSpace", "opset1", [c], {"block_size": 2, "mode": "blocks_first"},
                   [("f32", [2, 2, 64, 64])], out_names=["y"])
    w.result(y, "y")
    xml = w.save(tmp_path / "big.xml")
    assert path(node_types(xml)) == "gather"
    d2s = next(l for l in load_ir(xml).order if l.type == "DepthToSpace")
    assert_bitexact(run_onnx(xml, {})[0], oracle_for("DepthToSpace", "opset1")(d2s, [value])[0])


@pytest.mark.parametrize("etype,opset", [("bf16", 17), ("f8e4m3", 21), ("f8e5m2", 21)])
@pytest.mark.parametrize("fmt,shape", [("NCHW", [1, 8, 2, 3]), ("NCHW", [1, 8, 1, 2, 3]), ("NHWC", [1, 2, 3, 16])])
def test_narrow_float_types(tmp_path, etype, opset, fmt, shape):
    """bf16 and float8 move bit for bit (compared after an exact Cast to f32, which onnxruntime's
    Python API can return); float8 needs opset 21, where Reshape and Transpose take it."""
    w = IRWriter("narrow")
    x = w.parameter(shape, etype, "x")
    (d,) = w.layer("DepthToSpace", "opset1", [x], {"block_size": 2, "mode": "blocks_first", "data_format": fmt},
                   [(etype, None)], name="under_test")
    (y,) = w.layer("Convert", "opset1", [d], {"destination_type": "f32"}, [("f32", None)], out_names=["y"])
    w.result(y, "y")
    xml = w.save(tmp_path / "narrow.xml")
    values = (np.arange(np.prod(shape)) % 29 - 14) / 4
    values = values.astype(TYPES[etype].numpy).reshape(shape)
    expected = oracle(xml, values).astype(np.float32)
    assert_bitexact(run_onnx(xml, {"x": values}, opset=opset)[0], expected, etype)
    if opset > 17:
        with pytest.raises(Exception, match="opset >= 21"):
            convert(xml, opset=19)
