"""StridedSlice-1 (all five masks) and Slice-8 on OpenVINO-written IR: bit for bit against the
oracle, numpy and the OpenVINO runtime, on a table and on hypothesis-drawn slices."""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as ops1
import openvino.opset15 as ops
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, run_onnx, run_openvino

SHAPE = (3, 4, 5)
DATA = np.arange(60, dtype=np.float32).reshape(SHAPE) - 20


def _save(path, make, dtype=np.float32, shape=SHAPE):
    x = ops.parameter(shape, dtype, name="x")
    x.output(0).get_tensor().set_names({"x"})
    ov.save_model(ov.Model([ops.result(make(x).output(0))], [x], "m"), str(path), compress_to_fp16=False)
    return path


def _check(xml, data, expected):
    got = run_onnx(xml, {"x": data})[0]
    assert_bitexact(got, expected, "onnxruntime vs numpy")
    assert_bitexact(next(iter(evaluate(ir2onnx.load_ir(xml), {"x": data}).values())), expected, "oracle vs numpy")
    assert_bitexact(run_openvino(xml, [data])[0], expected, "OpenVINO vs numpy")


def _ss(begin, end, stride, bm=(), em=(), new=(), shrink=(), ell=()):
    c = lambda v: ops.constant(np.array(v, np.int64))  # noqa: E731
    m = lambda v: list(v) + [0] * (len(begin) - len(v))  # noqa: E731  (OpenVINO wants equal lengths)
    return lambda x: ops1.strided_slice(x, c(begin), c(end), c(stride), m(bm), m(em), m(new), m(shrink), m(ell))


STRIDED = [  # make, numpy expression
    (_ss([1, 0], [3, 4], [1, 2]), lambda a: a[1:3, 0:4:2]),
    (_ss([-1, 3], [0, 0], [-1, -1]), lambda a: a[-1:0:-1, 3:0:-1]),
    (_ss([5, 1], [0, -1], [1, 1], bm=[1, 0], em=[1, 1]), lambda a: a[:, 1:]),
    (_ss([5, 1], [2, -1], [1, 1], bm=[1, 0], em=[0, 0]), lambda a: a[:2, 1:-1]),
    (_ss([0, 0], [0, 0], [-1, -2], bm=[1, 1], em=[1, 1]), lambda a: a[::-1, ::-2]),
    (_ss([1, 0, 2], [0, 0, 0], [1, 1, 1], shrink=[1, 0, 1], bm=[0, 1, 0], em=[0, 1, 0]), lambda a: a[1, :, 2]),
    (_ss([0, 0, -1], [0, 0, 0], [1, 1, 1], ell=[0, 1, 0], shrink=[0, 0, 1], bm=[1, 0, 0], em=[1, 0, 0]),
     lambda a: a[:, ..., -1]),
    (_ss([0, 0, 0], [0, 2, 0], [1, 1, 1], new=[1, 0, 1], bm=[0, 1, 0], em=[0, 0, 0]), lambda a: a[None, :2, None]),
    (_ss([0, 1], [0, 3], [1, 1], ell=[1, 0]), lambda a: a[..., 1:3]),
    (_ss([-100, 2], [100, 100], [1, 1]), lambda a: a[-100:100, 2:100]),
    (_ss([1], [2], [1]), lambda a: a[1:2]),
]


@pytest.mark.parametrize("index", range(len(STRIDED)))
def test_strided_slice_table(tmp_path, index):
    make, expr = STRIDED[index]
    xml = _save(tmp_path / "m.xml", make)
    _check(xml, DATA, np.ascontiguousarray(expr(DATA)))


@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.bool_, np.float16])
def test_strided_slice_types(tmp_path, dtype):
    data = (np.arange(60) % 5).astype(dtype).reshape(SHAPE)
    xml = _save(tmp_path / "m.xml", _ss([2, 1], [0, 4], [-1, 2], em=[1, 0]), dtype)
    _check(xml, data, np.ascontiguousarray(data[2::-1, 1:4:2]))


_bound = st.one_of(st.integers(-7, 7), st.just(None))


@settings(max_examples=25)
@given(slices=st.lists(st.tuples(_bound, _bound, st.sampled_from([-3, -2, -1, 1, 2, 3])), min_size=1, max_size=3))
def test_slice8_property(tmp_path_factory, slices):
    """Slice-8 with random start/stop/step (None: the INT64 extreme for that direction)."""
    axes = list(range(len(slices)))
    big = np.iinfo(np.int64)
    start = [(0 if s > 0 else big.max) if b is None else b for b, _, s in slices]
    stop = [(big.max if s > 0 else big.min) if e is None else e for _, e, s in slices]
    step = [s for _, _, s in slices]
    c = lambda v: ops.constant(np.array(v, np.int64))  # noqa: E731
    xml = _save(tmp_path_factory.mktemp("s") / "m.xml", lambda x: ops.slice(x, c(start), c(stop), c(step), c(axes)))
    expected = DATA[tuple(slice(b, e, s) for b, e, s in slices)]
    _check(xml, DATA, np.ascontiguousarray(expected))


def test_slice8_runtime_bounds_and_i32(tmp_path):
    """start/stop as i32 graph inputs (cast to int64), negative axes."""
    x = ops.parameter(SHAPE, np.float32, name="x")
    b = ops.parameter([1], np.int32, name="b")
    for p, n in ((x, "x"), (b, "b")):
        p.output(0).get_tensor().set_names({n})
    y = ops.slice(x, b, ops.constant(np.array([-1], np.int32)), ops.constant(np.array([1], np.int32)),
                  ops.constant(np.array([-1], np.int32)))
    xml = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(y)], [x, b], "m"), str(xml))
    feeds = {"x": DATA, "b": np.array([1], np.int32)}
    assert_bitexact(run_onnx(xml, feeds)[0], np.ascontiguousarray(DATA[..., 1:-1]))
    assert_bitexact(run_openvino(xml, feeds)[0], np.ascontiguousarray(DATA[..., 1:-1]))


def _writer_ss(tmp_path, begin, end, stride, attrs):
    w = IRWriter()
    x = w.parameter(list(SHAPE), "f32", "x")
    ins = [x, w.const(np.array(begin, np.int64)), w.const(np.array(end, np.int64)), w.const(np.array(stride, np.int64))]
    w.result(w.layer("StridedSlice", "opset1", ins, {"begin_mask": "0", "end_mask": "0", **attrs}, [("f32", None)])[0])
    return w.save(tmp_path / "bad.xml")


@pytest.mark.parametrize("begin,end,stride,attrs,match", [
    ([0], [1], [0], {}, "contains 0"),
    ([0, 0], [1], [1], {}, "have 2, 1 and 1 values"),
    ([0, 0], [1, 1], [1, 1], {"ellipsis_mask": "1,1"}, "more than one bit"),
    ([7], [8], [1], {"shrink_axis_mask": "1"}, "out of range for axis 0"),
    ([0, 0, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1], {}, "4 sliced axes but the input has rank 3"),
])
def test_strided_slice_invalid(tmp_path, begin, end, stride, attrs, match):
    with pytest.raises(InvalidLayer, match=match):
        convert(_writer_ss(tmp_path, begin, end, stride, attrs))


@pytest.mark.parametrize("start,stop,step", [
    ([7], [2**31 - 1], [-2]),   # start and stop past the end: Python and OpenVINO give nothing
    ([1], [2**31 - 1], [-1]),   # stop past the end: nothing (onnxruntime took [1, 0])
    ([1], [5], [-1]),
    ([-6], [2**31 - 1], [-1]),  # start before -dim, stop past the end: nothing
    ([-6], [-2**31], [-1]),     # start before -dim is clamped to 0 ("silently clamped"): [0]
    ([3], [-2**31], [-1]),
])
def test_slice8_negative_step_out_of_range_bounds(tmp_path, start, stop, step):
    """Regression (fuzzing): onnxruntime's Slice takes an axis from its start down when a negative
    step's stop is at or past the dim (OpenVINO and Python: empty). Checked on a static input and on
    a dynamic one (the guard then runs in the graph) at two sizes of the same model."""
    c = lambda v: ops.constant(np.array(v, np.int32))  # noqa: E731
    for shape, feeds in (([4, 2], [(4, 2)]), ([-1, 2], [(4, 2), (2, 2)])):
        xml = _save(tmp_path / f"m{len(feeds)}.xml", lambda x: ops.slice(x, c(start), c(stop), c(step), c([0])),
                    shape=shape)
        for fs in feeds:
            data = np.arange(np.prod(fs), dtype=np.float32).reshape(fs)
            d = fs[0]
            # Python's rule, with OpenVINO's clamping of a start before -dim to 0
            b = max(start[0] + d, 0) if start[0] < 0 else min(start[0], d - 1)
            e = stop[0] + d if stop[0] < 0 else stop[0]
            expected = data[b:(None if e < 0 else e):step[0]] if e < d else data[:0]
            _check(xml, data, np.ascontiguousarray(expected))


def test_strided_slice_negative_stride_end_past_dim(tmp_path):
    """The same guard through StridedSlice: a[1:2**63-1:-1] on 3 elements is empty."""
    xml = _save(tmp_path / "m.xml", _ss([1, 0], [2**63 - 1, 0], [-1, 1], em=[0, 1]))
    _check(xml, DATA, np.ascontiguousarray(DATA[1::-1, :][:0]))


@pytest.mark.parametrize("make,expected", [
    (_ss([2, 1], [0, 3], [1, 1], bm=[1, 0], shrink=[1, 0]), lambda a: a[0, 1:3]),
    (_ss([1, -3, 2], [3, 3, 0], [1, 3, -1], bm=[0, 0, 1], shrink=[0, 0, 1]), lambda a: a[1:3, -3:3:3, 0]),
])
def test_strided_slice_begin_mask_on_a_shrunk_axis(tmp_path, make, expected):
    """Regression (fuzzing): begin_mask ignores begin also on a shrink_axis entry, which then takes
    index 0 (the spec's "real beginning"; OpenVINO's shape inference and runtime, whatever the
    stride). The lowering and the oracle took begin[i]."""
    xml = _save(tmp_path / "m.xml", make)
    _check(xml, DATA, np.ascontiguousarray(expected(DATA)))


# -- begin/end/stride fed at run time ------------------------------------------------------------
RUN_TIME = [  # begin, end, stride, masks, numpy expression
    ([1, 0], [3, 4], [1, 2], {}, lambda a: a[1:3, 0:4:2]),
    ([-1, 3], [0, 0], [-1, -1], {}, lambda a: a[-1:0:-1, 3:0:-1]),
    ([5, 1], [0, -1], [1, 1], dict(bm=[1, 0], em=[1, 1]), lambda a: a[:, 1:]),
    ([0, 0], [0, 0], [-1, -2], dict(bm=[1, 1], em=[1, 1]), lambda a: a[::-1, ::-2]),
    ([1, 0, -1], [0, 0, 0], [1, 1, 1], dict(shrink=[1, 0, 1], bm=[0, 1, 0], em=[0, 1, 0]), lambda a: a[1, :, -1]),
    ([0, 0, -2], [0, 0, 0], [1, 1, 1], dict(ell=[0, 1, 0], shrink=[0, 0, 1], bm=[1, 0, 0], em=[1, 0, 0]),
     lambda a: a[:, ..., -2]),
    ([0, 0, 0], [0, 2, 0], [1, 1, 1], dict(new=[1, 0, 1], bm=[0, 1, 0]), lambda a: a[None, :2, None]),
    ([-100, 2], [100, 100], [1, 1], {}, lambda a: a[-100:100, 2:100]),
    ([0, 7], [2, 1], [1, -1], {}, lambda a: a[0:2, 7:1:-1]),  # a negative stride from past the end
]


@pytest.mark.parametrize("index", range(len(RUN_TIME)))
def test_strided_slice_run_time_values(tmp_path, index):
    """begin, end and stride are Parameters (i32): the masks pick and the stride's sign decides
    in the graph; dynamic data dims resolved to two sizes."""
    begin, end, stride, masks, expr = RUN_TIME[index]
    n = len(begin)
    x = ops.parameter([-1, -1, -1], np.float32, name="x")
    vs = [ops.parameter([n], np.int32, name=k) for k in ("b", "e", "s")]
    for v, k in zip([x] + vs, ("x", "b", "e", "s")):
        v.output(0).get_tensor().set_names({k})
    m = lambda key: list(masks.get(key, [])) + [0] * (n - len(masks.get(key, [])))  # noqa: E731
    y = ops1.strided_slice(x, *vs, m("bm"), m("em"), m("new"), m("shrink"), m("ell"))
    path = tmp_path / "rt.xml"
    ov.save_model(ov.Model([ops.result(y.output(0))], [x, *vs], "m"), str(path))
    for shape in (SHAPE, (4, 9, 2)):
        data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        feeds = {"x": data, "b": np.array(begin, np.int32), "e": np.array(end, np.int32),
                 "s": np.array(stride, np.int32)}
        want = np.ascontiguousarray(expr(data))
        assert_bitexact(run_onnx(path, feeds)[0], want, "onnxruntime vs numpy")
        assert_bitexact(next(iter(evaluate(ir2onnx.load_ir(path), feeds).values())), want, "oracle vs numpy")
        assert_bitexact(run_openvino(path, feeds)[0], want, "OpenVINO vs numpy")


def _scalar_model(path, make):
    """Const [88, 1, 71] -> make -> Add with an i32 scalar parameter ``p``."""
    p = ops.parameter([], np.int32, name="p")
    p.output(0).get_tensor().set_names({"p"})
    out = ops.add(make(ops.constant(np.array([88, 1, 71], np.int32))), p)
    ov.save_model(ov.Model([ops.result(out.output(0))], [p], "m"), str(path))
    return path


def test_strided_slice_shrink_of_a_constant_folds_to_a_scalar(tmp_path):
    """A constant StridedSlice whose shrink_axis_mask removes the only axis is 0-d, as OpenVINO
    gives it (the fold once returned shape (1,), which failed the next layer's declared port)."""
    xml = _scalar_model(tmp_path / "m.xml", lambda c: ops1.strided_slice(
        c, ops.constant(np.array([2], np.int64)), ops.constant(np.array([3], np.int64)),
        ops.constant(np.array([1], np.int64)), [0], [0], shrink_axis_mask=[1]))
    feed = {"p": np.array(5, np.int32)}
    got = run_onnx(xml, feed)[0]
    assert_bitexact(got, np.array(76, np.int32), "onnxruntime vs numpy")
    assert_bitexact(run_openvino(xml, feed)[0], got, "OpenVINO vs onnxruntime")


def test_broadcast_to_a_shape_packed_from_shrunk_constants(tmp_path):
    """TensorFlow's Fill(dims, value) as license-plate-recognition-barrier-0007 has it: the dims
    packed (Unsqueeze, Concat) from scalars that StridedSlice shrink_axis_mask takes out of a
    constant shape vector, then Broadcast; it converts and matches OpenVINO."""
    dims = ops.constant(np.array([2, 1, 3], np.int64))
    one = lambda v: ops.constant(np.array([v], np.int64))  # noqa: E731
    parts = [ops.unsqueeze(ops1.strided_slice(dims, one(i), one(i + 1), one(1), [0], [0], shrink_axis_mask=[1]),
                           ops.constant(np.array(0, np.int64))) for i in range(3)]
    target = ops.concat(parts, 0)
    v = ops.parameter([], np.float32, name="v")
    v.output(0).get_tensor().set_names({"v"})
    out = ops.broadcast(v, target)
    xml = tmp_path / "fill.xml"
    ov.save_model(ov.Model([ops.result(out.output(0))], [v], "fill"), str(xml))
    feed = {"v": np.array(2.5, np.float32)}
    got = run_onnx(xml, feed)[0]
    assert_bitexact(got, np.full((2, 1, 3), 2.5, np.float32), "onnxruntime vs numpy")
    assert_bitexact(run_openvino(xml, feed)[0], got, "OpenVINO vs onnxruntime")
