"""Every node ir2onnx emits has an onnxruntime CPU kernel for its element types: every selftest
case, and a sweep of the op families over every element type, either is refused by the
converter or gets an onnxruntime CPU session (a kernel gap fails here, with the layer and node).
Values are checked elsewhere (each family's tests): only session creation is checked here."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino.opset15 as ops
import openvino.opset16 as o16
from openvino.utils.node_factory import NodeFactory
import pytest

from ir2onnx.runtime import sessions as runtime
from ir2onnx.errors import Ir2OnnxError
from ir2onnx.ir.reader import load_ir
from ir2onnx.lowering.convert import DEFAULT_OPSET, convert_graph
from ir2onnx.selftest.catalog import FAMILIES
from ir2onnx.testing import ov_parameter, ov_save
from ir2onnx.verify import verify_model


def _gap(xml: Path, opset: int) -> str | None:
    """None when ``xml`` is refused or its model gets a CPU session; else what is missing."""
    try:
        conv = convert_graph(load_ir(xml), opset)
    except Ir2OnnxError:
        return None
    try:
        verify_model(conv.to_model_proto().SerializeToString(), conv.node_layers, opset)
    except Ir2OnnxError as e:
        return f"{xml.stem} at opset {opset}: {e}"
    return None


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.__name__.rsplit(".", 1)[-1])
def test_every_selftest_case_gets_a_cpu_session(tmp_path, family):
    gaps, built = [], 0
    for i, case in enumerate(family.CASES):
        folder = tmp_path / str(i)
        folder.mkdir()
        try:
            xml = case.build(folder)
        except Ir2OnnxError:  # a case the reader refuses on purpose
            assert case.invalid, case.name
            continue
        built += 1
        opset = max(DEFAULT_OPSET, case.min_opset or 0)
        gaps.append(_gap(xml, opset))
    assert built and not [g for g in gaps if g], [g for g in gaps if g]


TYPES = [np.bool_, np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
         np.float16, np.float32, np.float64]


def _c(values, dtype=np.int64):
    return ops.constant(np.asarray(values, dtype))


UNARY = {
    "Abs": ops.abs, "Negative": ops.negative, "Sign": ops.sign, "Floor": ops.floor, "Ceiling": ops.ceiling,
    "ReLU": ops.relu, "Clamp": lambda x: ops.clamp(x, 0.5, 5.5), "Round": lambda x: ops.round(x, "half_to_even"),
    "Round-away": lambda x: ops.round(x, "half_away_from_zero"), "Exp": ops.exp, "Sqrt": ops.sqrt, "Log": ops.log,
    "Erf": ops.erf, "Sigmoid": ops.sigmoid, "Tanh": ops.tanh, "Sin": ops.sin, "SoftSign": ops.softsign,
    "HSwish": ops.hswish, "HSigmoid": ops.hsigmoid, "Mish": ops.mish, "SoftPlus": ops.softplus, "Gelu": lambda x: ops.gelu(x, "erf"),
    "Swish": ops.swish, "Elu": lambda x: ops.elu(x, 1.0),
    "Transpose": lambda x: ops.transpose(x, _c([2, 0, 1])), "Reshape": lambda x: ops.reshape(x, _c([0, -1]), True),
    "Squeeze": lambda x: ops.squeeze(ops.unsqueeze(x, _c([1])), _c([1])), "Concat": lambda x: ops.concat([x, x], 1),
    "Tile": lambda x: ops.tile(x, _c([1, 2, 1])), "Broadcast": lambda x: ops.broadcast(x, _c([2, 1, 3, 4])),
    "Gather": lambda x: ops.gather(x, _c([0, 2, 1]), _c(1)),
    "GatherElements": lambda x: ops.gather_elements(x, _c(np.zeros((1, 3, 4))), 0),
    "GatherND": lambda x: ops.gather_nd(x, _c([[0, 1]]), 1),
    "Slice": lambda x: ops.slice(x, _c([1]), _c([3]), _c([1]), _c([1])),
    "StridedSlice": lambda x: ops.strided_slice(x, _c([0, 1]), _c([0, 3]), _c([1, 1]), [1, 0], [1, 0]),
    "Split": lambda x: ops.split(x, _c(1), 3).output(1),
    "VariadicSplit": lambda x: ops.variadic_split(x, _c(2), _c([1, 3])).output(1),
    "Pad": lambda x: ops.pad(x, _c([0, 1, 0]), _c([0, 0, 2]), "constant"),
    "Pad-edge": lambda x: ops.pad(x, _c([0, 1, 0]), _c([0, 0, 2]), "edge"),
    "Pad-reflect": lambda x: ops.pad(x, _c([0, 1, 0]), _c([0, 0, 2]), "reflect"),
    "Pad-symmetric": lambda x: ops.pad(x, _c([0, 1, 0]), _c([0, 0, 2]), "symmetric"),
    "Reverse": lambda x: NodeFactory("opset1").create("Reverse", [x.output(0), _c([1]).output(0)], {"mode": "index"}), "Roll": lambda x: ops.roll(x, _c([1]), _c([2])),
    "DepthToSpace": lambda x: ops.depth_to_space(ops.reshape(x, _c([0, 12, 1, 1]), True), "blocks_first", 2),
    "BatchToSpace": lambda x: ops.batch_to_space(x, _c([1, 1, 2]), _c([0, 0, 0]), _c([0, 0, 1])),
    "SpaceToBatch": lambda x: ops.space_to_batch(x, _c([1, 1, 2]), _c([0, 0, 1]), _c([0, 0, 1])),
    "ShuffleChannels": lambda x: ops.shuffle_channels(x, 1, 3), "CumSum": lambda x: ops.cumsum(x, _c(1)),
    "ReduceSum": lambda x: ops.reduce_sum(x, _c([1]), False), "ReduceMax": lambda x: ops.reduce_max(x, _c([1]), False),
    "ReduceMin": lambda x: ops.reduce_min(x, _c([1]), True), "ReduceMean": lambda x: ops.reduce_mean(x, _c([1]), False),
    "ReduceProd": lambda x: ops.reduce_prod(x, _c([1]), False), "ReduceL1": lambda x: ops.reduce_l1(x, _c([1]), False),
    "TopK": lambda x: ops.topk(x, _c(2), 1, "max", "value").output(0), "NonZero": lambda x: ops.non_zero(x, "i64"),
    "ShapeOf": ops.shape_of, "Convert-f32": lambda x: ops.convert(x, "f32"), "Convert-i8": lambda x: ops.convert(x, "i8"),
    "Convert-boolean": lambda x: ops.convert(x, "boolean"),
    "ScatterUpdate": lambda x: ops.scatter_update(x, _c([1]), ops.gather(x, _c([0]), _c(1)), _c(1)),
    "ScatterElementsUpdate": lambda x: ops.scatter_elements_update(
        x, _c(np.zeros((1, 3, 4))), ops.gather(x, _c([0]), _c(0)), _c(0)),
    "ScatterNDUpdate": lambda x: ops.scatter_nd_update(x, _c([[0]]), ops.gather(x, _c([0]), _c(0))),
    "IsNaN": ops.is_nan, "IsInf": ops.is_inf, "IsFinite": ops.is_finite, "Identity": o16.identity,
    "HardSigmoid": lambda x: ops.hard_sigmoid(x, ops.convert_like(_c(0.2, np.float32), x),
                                              ops.convert_like(_c(0.5, np.float32), x)),
    "LogicalNot": ops.logical_not, "BitwiseNot": ops.bitwise_not, "MatMul": lambda x: ops.matmul(x, x, False, True),
    "Interpolate": lambda x: ops.interpolate(x, _c([6, 8]), "nearest", "sizes", axes=_c([1, 2])),
    "MaxPool": lambda x: ops.max_pool(x, [1], [1], [0], [0], [2]).output(0),
    "AvgPool": lambda x: ops.avg_pool(x, [1], [0], [0], [2], True),
    "Select": lambda x: ops.select(_c([True, False, True, False], np.bool_), x, x),
}
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "floor_mod", "mod",
          "squared_difference", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
          "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
          "bitwise_left_shift", "bitwise_right_shift"]
RUNTIME_INDICES = {"Gather-indices": lambda x, i: ops.gather(x, i, _c(1)),
                   "Gather-batch": lambda x, i: ops.gather(x, i, _c(1), 1)}


def _sweep(tmp_path, make) -> list[str]:
    """``make(dtype) -> (outputs, params)`` for every element type, at opsets 17 and 18; the
    types OpenVINO itself refuses to build are left out (at least one must be built)."""
    gaps, built = [], 0
    for dtype in TYPES:
        try:
            outputs, params = make(dtype)
            xml = ov_save(tmp_path / f"{np.dtype(dtype).name}.xml", outputs, params)
        except RuntimeError:  # OpenVINO's own type checks
            continue
        built += 1
        gaps += [g for g in (_gap(xml, opset) for opset in (17, 18)) if g]
    assert built, "no element type built"
    return gaps


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_every_element_type(tmp_path, name):
    def make(dtype):
        x = ov_parameter([None, 3, 4], dtype, "x")
        return UNARY[name](x), [x]
    assert not _sweep(tmp_path, make)


@pytest.mark.parametrize("name", BINARY)
def test_binary_every_element_type(tmp_path, name):
    def make(dtype):
        a, b = ov_parameter([None, 3, 4], dtype, "a"), ov_parameter([4], dtype, "b")
        return getattr(ops, name)(a, b), [a, b]
    assert not _sweep(tmp_path, make)


@pytest.mark.parametrize("name", list(RUNTIME_INDICES))
def test_runtime_indices_every_element_type(tmp_path, name):
    """Gather's out-of-range masking (boolean data: the transformers' attention masks)."""
    def make(dtype):
        x, i = ov_parameter([None, 3, 4], dtype, "x"), ov_parameter([None, 2], np.int64, "i")
        return RUNTIME_INDICES[name](x, i), [x, i]
    assert not _sweep(tmp_path, make)


def test_a_gap_is_seen(tmp_path, monkeypatch):
    """The sweep can fail: a stand-in lowering of Select as a plain Where on i16 is caught."""
    from ir2onnx.lowering.registry import LOWERINGS

    monkeypatch.setitem(LOWERINGS, ("Select", "opset1"), lambda ctx, layer, inputs: [ctx.b.Where(*inputs)])

    def make(dtype):
        x = ov_parameter([None, 3, 4], dtype, "x")
        return UNARY["Select"](x), [x]
    gaps = _sweep(tmp_path, make)
    assert any("int16" in g and "Where" in g for g in gaps), gaps
