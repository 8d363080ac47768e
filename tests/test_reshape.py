"""Reshape-1: the spec's worked examples, a table of constant patterns, dynamic inputs, run-time
patterns and the errors the spec names. Every result is compared bit for bit with OpenVINO's
runtime and with the oracle interpreter."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ir2onnx
from ir2onnx.runtime import sessions as runtime
from ir2onnx.errors import InvalidLayer, Ir2OnnxError
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, run_onnx, run_openvino, ov_parameter, ov_save

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "reshape"
PUBLISHED = {1: (0, 4), 2: (2, 150, 4), 3: (2, 2, 1, 3), 4: (3, 1), 5: (3, 1)}


_param = ov_parameter


def _save(tmp_path, outputs, params, name="m") -> Path:
    return ov_save(tmp_path / f"{name}.xml", outputs, params)


def _reshape_ir(tmp_path, shape, pattern, special_zero, dtype=np.float32, pdtype=np.int64, runtime_pattern=False):
    x = _param(shape, dtype, "x")
    if runtime_pattern:
        p = _param([len(pattern)], pdtype, "p")
        return _save(tmp_path, [ops.reshape(x, p, special_zero)], [x, p])
    return _save(tmp_path, [ops.reshape(x, ops.constant(np.array(pattern, pdtype)), special_zero)], [x])


def _data(shape, dtype):
    values = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    if dtype == np.bool_:
        return np.asarray(values % 3 == 1)
    return np.asarray(values + 1).astype(dtype)


def check_everywhere(xml, feeds: dict) -> np.ndarray:
    """onnxruntime == OpenVINO == oracle, bit for bit; returns the result."""
    got = run_onnx(xml, feeds)[0]
    assert_bitexact(got, run_openvino(xml, feeds)[0], "onnxruntime vs OpenVINO")
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), "onnxruntime vs oracle")
    return got


# -- the spec's five worked examples ---------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_worked_example(n):
    xml = SAMPLES / f"example{n}.xml"
    data = np.load(SAMPLES / f"example{n}_data.npy")
    expected = np.load(SAMPLES / f"example{n}_y.npy")
    got = check_everywhere(xml, {"data": data})
    assert got.shape == PUBLISHED[n]
    assert_bitexact(got, expected)


def test_worked_example_is_one_constant_reshape():
    model = ir2onnx.convert(SAMPLES / "example2.xml")
    assert [n.op_type for n in model.graph.node] == ["Reshape", "Identity"]
    shape = onnx.numpy_helper.to_array(model.graph.initializer[0])
    assert shape.tolist() == [2, 150, 4]


# -- constant patterns on static inputs ------------------------------------------------------------
TABLE = [
    ((2, 3, 4), [4, -1], False),
    ((2, 3, 4), [0, -1], True),
    ((2, 3, 4), [-1], False),
    ((2, 3, 4), [0, 0, 0], True),
    ((0, 3, 4), [0, 0, 0], False),  # literal zeros on an empty input
    ((0, 3, 4), [3, 0, 8], False),
    ((2, 0, 3), [0, 5, 0], False),
    ((2, 0, 3), [-1, 0], True),  # copied 0: the copy cancels, -1 = 2*3
    ((0, 3), [-1, 0], True),
    ((0, 3), [5, -1], False),
    ((1,), [], False),  # scalar output
    ((1, 1), [], True),
    ((), [1, 1, 1], False),  # scalar input
    ((), [-1], True),
    ((2, 3, 4), [2, -1, 2], False),
    ((6,), [1, 1, 3, -1], False),
]


@pytest.mark.parametrize("shape,pattern,special_zero", TABLE)
@pytest.mark.parametrize("pdtype", [np.int64, np.int32])
def test_constant_pattern_table(tmp_path, shape, pattern, special_zero, pdtype):
    xml = _reshape_ir(tmp_path, shape, pattern, special_zero, pdtype=pdtype)
    check_everywhere(xml, {"x": _data(shape, np.float32)})
    model = ir2onnx.convert(xml)
    assert [n.op_type for n in model.graph.node] == ["Reshape", "Identity"]  # one constant shape


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int8, np.int16, np.int32, np.int64,
                                   np.uint8, np.uint16, np.uint32, np.uint64, np.bool_])
@pytest.mark.parametrize("shape,pattern,special_zero", [((2, 3, 4), [0, -1, 2], True), ((0, 2), [2, 0, 5], False)])
def test_every_element_type(tmp_path, dtype, shape, pattern, special_zero):
    xml = _reshape_ir(tmp_path, shape, pattern, special_zero, dtype=dtype)
    got = check_everywhere(xml, {"x": _data(shape, dtype)})
    assert got.dtype == np.dtype(dtype)


# -- dynamic input dims with a constant pattern ------------------------------------------------------
DYNAMIC = [
    ([None, 3, 4], [0, -1], True, [(1, 3, 4), (7, 3, 4), (0, 3, 4)]),
    ([None, None, 4], [0, 0, 2, 2], True, [(2, 3, 4), (1, 0, 4)]),
    ([None, None, 4], [0, -1, 2], True, [(2, 3, 4), (0, 5, 4), (3, 0, 4)]),
    ([None, 6], [-1, 3], False, [(1, 6), (4, 6), (0, 6)]),
    ([None, 3, 4], [4, 0, -1], True, [(2, 3, 4), (0, 3, 4)]),
    ([2, None], [-1, 0], True, [(2, 5), (2, 0)]),
    ([None, None], [0, 3, -1], True, [(2, 6), (0, 6), (4, 0)]),
    # grouped-query attention's K/V: [B, kv, rep, S, D] -> [B, kv*rep, -1, D], static dims cancel
    ([None, 2, 3, None, 4], [0, 6, -1, 4], True, [(1, 2, 3, 5, 4), (2, 2, 3, 0, 4), (0, 2, 3, 5, 4)]),
    ([None, 2, 3, None, 4], [0, 12, -1, 2], True, [(1, 2, 3, 5, 4), (0, 2, 3, 5, 4)]),
    ([2, 3, None], [3, -1, 2], False, [(2, 3, 4), (2, 3, 0)]),
]


@pytest.mark.parametrize("shape,pattern,special_zero,runs", DYNAMIC)
def test_dynamic_input_constant_pattern(tmp_path, shape, pattern, special_zero, runs):
    xml = _reshape_ir(tmp_path, shape, pattern, special_zero)
    for run_shape in runs:
        check_everywhere(xml, {"x": _data(run_shape, np.float32)})


def test_dynamic_batch_copy_is_one_reshape(tmp_path):
    model = ir2onnx.convert(_reshape_ir(tmp_path, [None, 3, 4], [0, -1], True))
    assert [n.op_type for n in model.graph.node] == ["Reshape", "Identity"]
    assert onnx.numpy_helper.to_array(model.graph.initializer[0]).tolist() == [0, 12]


def test_grouped_query_reshape_takes_the_dynamic_dim(tmp_path):
    """When the static dims beside one dynamic dim cancel the literals, the -1 is that dim: two
    Shape slices and a Concat, no ReduceProd or Div (one Reshape per K and V of every layer)."""
    model = ir2onnx.convert(_reshape_ir(tmp_path, [None, 4, 3, None, 64], [0, 12, -1, 64], True))
    types = [n.op_type for n in model.graph.node]
    assert types.count("Shape") == 2 and not {"ReduceProd", "Div", "Gather"} & set(types), types


# -- the dynamic-batch flatten OpenVINO writes: ShapeOf -> Gather -> Concat -> Reshape ---------------
@pytest.mark.parametrize("special_zero", [False, True])
@pytest.mark.parametrize("opset", ["opset15", "opset1"])
def test_flatten_keeps_dynamic_batch(tmp_path, special_zero, opset):
    import openvino.opset1 as ops1

    o = ops if opset == "opset15" else ops1
    x = _param([None, 3, 4, 4], np.float32, "x")
    batch = o.gather(o.shape_of(x), ops.constant(np.array([0], np.int64)), ops.constant(np.int64(0)))
    y = ops.reshape(x, ops.concat([batch, ops.constant(np.array([-1], np.int64))], 0), special_zero)
    xml = _save(tmp_path, [y], [x])
    text = xml.read_text()
    assert 'type="ShapeOf"' in text and 'type="Gather"' in text and 'type="Concat"' in text
    out = tmp_path / "flat.onnx"
    ir2onnx.convert_file(xml, out)
    model = onnx.load(out)
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param and [d.dim_value for d in dims[1:]] == [3, 4, 4]
    assert [n.op_type for n in model.graph.node].count("Reshape") == 1
    sess = runtime.session(out)
    for batch_size in (1, 7):
        data = np.random.default_rng(batch_size).standard_normal((batch_size, 3, 4, 4)).astype(np.float32)
        got = runtime.run(sess, {"x": data})
        got = next(iter(got.values()))
        assert got.shape == (batch_size, 48)
        assert_bitexact(got, run_openvino(xml, {"x": data})[0])
        assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), {"x": data}).values())))


# -- a pattern known only at run time -------------------------------------------------------------------
RUNTIME = [
    ((2, 3, 4), [0, -1], True),
    ((2, 3, 4), [-1, 0], True),
    ((2, 3, 4), [0, 0, 0], True),
    ((2, 3, 4), [4, 0, 2], True),
    ((2, 3, 4), [6, 4], False),
    ((2, 3, 4), [-1, 4], False),
    ((2, 3, 4), [2, 2, -1, 3], False),
    ((2, 0, 3), [-1, 0], True),  # copied 0 cancels: (6, 0)
    ((0, 12), [0, -1], True),  # (0, 12)
    ((0, 3), [0, 5], False),  # literal zeros on an empty input
    ((0, 3), [3, 0], False),
    ((0, 3), [0, -1], False),  # 0 with -1: OpenVINO's runtime gives 0
    ((2, 0, 3), [-1, 0], False),
    ((1,), [], False),  # scalar output
    ((), [1, -1], True),  # scalar input
]


@pytest.mark.parametrize("shape,pattern,special_zero", RUNTIME)
@pytest.mark.parametrize("pdtype", [np.int64, np.int32])
def test_runtime_pattern(tmp_path, shape, pattern, special_zero, pdtype):
    xml = _reshape_ir(tmp_path, shape, pattern, special_zero, pdtype=pdtype, runtime_pattern=True)
    check_everywhere(xml, {"x": _data(shape, np.float32), "p": np.array(pattern, pdtype)})


@pytest.mark.parametrize("opset", [14, 18])
def test_other_opsets(tmp_path, opset):
    xml = _reshape_ir(tmp_path, (2, 0, 3), [-1, 0], True, runtime_pattern=True)
    feeds = {"x": np.zeros((2, 0, 3), np.float32), "p": np.array([-1, 0], np.int64)}
    assert run_onnx(xml, feeds, opset=opset)[0].shape == (6, 0)
    (tmp_path / "d").mkdir()
    xml = _reshape_ir(tmp_path / "d", [None, None, 4], [4, 0, -1], True)
    data = _data((2, 3, 4), np.float32)
    assert_bitexact(run_onnx(xml, {"x": data}, opset=opset)[0], data.reshape(4, 3, 2))


@pytest.mark.parametrize("shape,pattern,special_zero", [
    ((1, 1), [-1, -1], False),  # two -1s
    ((2, 3), [-2, -3], False),  # values < -1
    ((2, 3), [4, -1], False),  # 6 elements do not fit
    ((2,), [2, 0], True),  # copies dim 1 of a rank-1 input
    ((2, 3), [0, 6], False),  # literal 0 on a non-empty input
])
def test_runtime_pattern_errors_are_errors(tmp_path, shape, pattern, special_zero):
    xml = _reshape_ir(tmp_path, shape, pattern, special_zero, runtime_pattern=True)
    feeds = {"x": _data(shape, np.float32), "p": np.array(pattern, np.int64)}
    with pytest.raises(Ir2OnnxError):
        run_onnx(xml, feeds)
    with pytest.raises(InvalidLayer):
        evaluate(ir2onnx.load_ir(xml), feeds)


def test_runtime_pattern_dynamic_input(tmp_path):
    xml = _reshape_ir(tmp_path, [None, None], [0, 0], True, runtime_pattern=True)
    model = ir2onnx.convert(xml)
    sess = runtime.session(model.SerializeToString())
    for shape, pattern in [((2, 6), [0, -1]), ((2, 6), [3, -1]), ((0, 6), [0, -1]), ((4, 0), [-1, 0])]:
        feeds = {"x": _data(shape, np.float32), "p": np.array(pattern, np.int64)}
        got = next(iter(runtime.run(sess, feeds).values()))
        assert_bitexact(got, run_openvino(xml, feeds)[0])


# -- invalid layers: a clear error naming the layer --------------------------------------------------
INVALID = [
    ((2, 3), [-1, -1], False, "more than one -1"),
    ((2, 3), [-2, 3], False, "invalid"),
    ((2, 5, 4), [10, -1, 3], False, "cannot hold"),
    ((2, 3), [4, 2], True, "cannot hold"),
    ((2, 3), [2, 0, 0], True, "rank 2"),
    ((2, 3), [0, 6], False, "literal 0"),
    ((0, 3), [0, -1], False, "-1 cannot be inferred"),
]


@pytest.mark.parametrize("shape,pattern,special_zero,message", INVALID)
def test_invalid_pattern(tmp_path, shape, pattern, special_zero, message):
    w = IRWriter("bad")
    x = w.parameter(list(shape), "f32", "x")
    p = w.const(np.array(pattern, np.int64))
    y = w.layer("Reshape", "opset1", [x, p], {"special_zero": special_zero},
                [("f32", [max(d, 1) for d in pattern])], name="my_reshape", out_names=["y"])[0]
    w.result(y)
    xml = w.save(tmp_path / "bad.xml")
    with pytest.raises(InvalidLayer) as err:
        ir2onnx.convert(xml)
    assert "my_reshape" in str(err.value) and message in str(err.value)
    if message != "-1 cannot be inferred":  # the oracle follows OpenVINO's runtime there (0)
        with pytest.raises(InvalidLayer):
            evaluate(ir2onnx.load_ir(xml), {"x": _data(shape, np.float32)})


def test_invalid_dynamic_copy_beyond_rank(tmp_path):
    w = IRWriter("bad")
    x = w.parameter([None, None], "f32", "x")
    y = w.layer("Reshape", "opset1", [x, w.const(np.array([0, 0, 0], np.int64))], {"special_zero": True},
                [("f32", [None, None, None])], name="r3", out_names=["y"])[0]
    w.result(y)
    with pytest.raises(InvalidLayer, match="r3.*rank 2"):
        ir2onnx.convert(w.save(tmp_path / "bad.xml"))


# -- property: converter and oracle agree on which patterns are valid, and on the result -----------
def _ir(tmp_path, shape, pattern, special_zero, runtime_pattern):
    w = IRWriter("prop")
    x = w.parameter(list(shape), "i32", "x")
    p = w.parameter([len(pattern)], "i64", "p") if runtime_pattern else w.const(np.array(pattern, np.int64))
    y = w.layer("Reshape", "opset1", [x, p], {"special_zero": special_zero},
                [("i32", [None] * len(pattern))], out_names=["y"])[0]
    w.result(y)
    return w.save(tmp_path / "prop.xml")


@st.composite
def _cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=4)))
    special_zero = draw(st.booleans())
    groups = draw(st.lists(st.integers(1, 3), max_size=4))  # regroup the dims: a valid target
    dims, out = list(shape), []
    for size in groups:
        if dims:
            out.append(int(np.prod(dims[:size])))
            dims = dims[size:]
    out += [int(np.prod(dims))] if dims else []
    pattern = []
    for i, d in enumerate(out):
        choice = draw(st.sampled_from(["keep", "keep", "copy", "infer", "noise"]))
        if choice == "copy" and special_zero and i < len(shape) and shape[i] == d:
            d = 0
        elif choice == "infer" and -1 not in pattern:
            d = -1
        elif choice == "noise":
            d = draw(st.integers(-2, 5))
        pattern.append(d)
    return shape, pattern, special_zero


@given(case=_cases(), runtime_pattern=st.booleans())
def test_property_matches_oracle(tmp_path_factory, case, runtime_pattern):
    shape, pattern, special_zero = case
    xml = _ir(tmp_path_factory.mktemp("p"), shape, pattern, special_zero, runtime_pattern)
    feeds = {"x": np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)}
    if runtime_pattern:
        feeds["p"] = np.array(pattern, np.int64)
    try:
        want = evaluate(ir2onnx.load_ir(xml), feeds)["y"]
    except InvalidLayer:
        want = None
    try:
        got = run_onnx(xml, feeds)[0]
    except Ir2OnnxError:
        got = None
    if want is None:
        assert got is None, f"{pattern} on {shape}: the oracle refuses it, the converted model ran"
    elif got is None:  # only a constant 0 beside -1 is refused at convert time (ambiguous -1)
        assert not runtime_pattern and not special_zero and 0 in pattern and -1 in pattern
    else:
        assert_bitexact(got, want)


@pytest.mark.parametrize("order", [[0], [2, 0]])
def test_shape_of_pattern_with_a_zero_sized_dim_and_minus_one(tmp_path, order):
    """Regression: a pattern of the input's own dynamic dims plus -1 with special_zero=false
    (OpenVINO's flatten [ShapeOf[0], -1], or [ShapeOf[2], ShapeOf[0], -1]) cancelled the copied
    dims against the input's, which is exact only while they are not 0: with a zero-sized dim
    onnxruntime gave [0,48] / [2,0,3] where the oracle and the run-time pattern path give [0,0] /
    [2,0,0] (the spec leaves this -1 open; ir2onnx resolves it one way for every pattern source).
    OpenVINO 2026.4 agrees on [2,0,0] but gives [0,48] for its flatten (README: where OpenVINO's
    runtime differs); a non-empty input is bit exact everywhere."""
    x = _param([None, 3, None] if order == [2, 0] else [None, 3, 4, 4], np.float32, "x")
    dims = [ops.gather(ops.shape_of(x), ops.constant(np.array([i], np.int64)), ops.constant(np.int64(0)))
            for i in order]
    y = ops.reshape(x, ops.concat(dims + [ops.constant(np.array([-1], np.int64))], 0), False)
    xml = _save(tmp_path, [y], [x])
    assert [n.op_type for n in ir2onnx.convert(xml).graph.node].count("Reshape") == 1
    empty, full = ((0, 3, 2), (2, 3, 5)) if order == [2, 0] else ((0, 3, 4, 4), (5, 3, 4, 4))
    assert check_everywhere(xml, {"x": _data(full, np.float32)}).shape == ((5, 2, 3) if order == [2, 0] else (5, 48))
    feeds = {"x": _data(empty, np.float32)}
    got = run_onnx(xml, feeds)[0]
    assert_bitexact(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), "onnxruntime vs oracle")
    assert got.shape == ((2, 0, 0) if order == [2, 0] else (0, 0))
    assert run_openvino(xml, feeds)[0].shape == ((2, 0, 0) if order == [2, 0] else (0, 48))
