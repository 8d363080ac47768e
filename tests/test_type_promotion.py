"""ConvertPromoteTypes-14 on OpenVINO-written IR. The common type is fixed at conversion time, so
the rules are checked for every pair of the element types ONNX can hold, every attribute
combination and scalar/tensor inputs against OpenVINO's own type inference (the lowering's and
the oracle's rules, each on its own); then values through onnxruntime, the oracle and OpenVINO
(dynamic dims, run-time inputs)."""
from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import openvino as ov
import openvino.opset14 as o14
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer
from ir2onnx.ir.element_types import element_type
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.oracles.type_promotion import promoted
from ir2onnx.ops.type_promotion import common_type
from ir2onnx.testing import IRWriter, assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

NAMES = ["boolean", "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f16", "bf16", "f32", "f64"]
ATTRS = list(itertools.product([False, True], [False, True], ["f32", "i64"]))


def _ov_type(name):
    return {"boolean": ov.Type.boolean, "bf16": ov.Type.bf16}.get(name) or ov.Type(element_type(name).numpy)


def _openvino_type(t0, t1, s0, s1, unsafe, pytorch, u64):
    a = o14.parameter([] if s0 else [2], _ov_type(t0))
    b = o14.parameter([] if s1 else [2], _ov_type(t1))
    try:
        return o14.convert_promote_types(a, b, unsafe, pytorch, u64).get_output_element_type(0).get_type_name()
    except RuntimeError:
        return None


def _ours(fn, t0, t1, s0, s1, unsafe, pytorch, u64):
    layer = SimpleNamespace(attrs={"promote_unsafe": unsafe, "pytorch_scalar_promotion": pytorch,
                                   "u64_integer_promotion_target": element_type(u64)},
                            type="ConvertPromoteTypes", version="opset14", name="cpt", id=0)
    try:
        return fn(layer, element_type(t0), element_type(t1), s0, s1).name
    except InvalidLayer:
        return None


@pytest.mark.parametrize("unsafe,pytorch,u64", ATTRS, ids=lambda v: str(v))
def test_rules_match_openvino_type_inference(unsafe, pytorch, u64):
    checked = refused = 0
    for t0, t1 in itertools.product(NAMES, NAMES):
        for s0, s1 in ((False, False), (True, False), (False, True)):
            want = _openvino_type(t0, t1, s0, s1, unsafe, pytorch, u64)
            want = {"boolean": "boolean"}.get(want, want)
            for fn in (common_type, promoted):
                assert _ours(fn, t0, t1, s0, s1, unsafe, pytorch, u64) == want, (fn.__module__, t0, t1, s0, s1)
            checked += 1
            refused += want is None
    assert checked == 3 * len(NAMES) ** 2 and (refused == 0 if unsafe else 0 < refused < checked)


# t0, shape0, t1, shape1, unsafe, pytorch, u64 target
RUN = [
    (np.uint8, [None, 3], np.int8, [3], True, False, "f32"),       # -> i16
    (np.uint16, [None], np.int64, [None], False, False, "f32"),    # -> i64
    (np.int32, [2, None], np.float64, [2, 1], False, False, "f32"),  # -> f64
    (np.int64, [None], np.float16, [None], True, False, "f32"),    # unsafe -> f16 (rounds)
    (np.float32, [], np.float16, [None, 2], True, True, "f32"),    # pytorch scalar -> f16
    (np.int64, [], np.int8, [None], True, True, "f32"),            # unsafe scalar -> i8 (wraps)
    (np.bool_, [None], np.float32, [None], False, False, "f32"),   # -> f32
    (np.uint64, [None], np.int32, [None], True, False, "f32"),     # u64 with an integer -> the target
]


def _data(rng, dtype, shape):
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind == "f":  # f32 values: OpenVINO's CPU plugin computes f64 in f32
        return np.asarray((rng.standard_normal(shape) * 1000).astype(np.float32).astype(dtype))
    info = np.iinfo(dtype)
    return np.asarray(rng.integers(max(info.min, -3000), min(info.max, 70000), shape).astype(dtype))


@pytest.mark.parametrize("case", RUN, ids=lambda c: f"{np.dtype(c[0]).name}-{np.dtype(c[2]).name}")
def test_values(tmp_path, case):
    t0, s0, t1, s1, unsafe, pytorch, u64 = case
    a, b = ov_parameter(s0, t0, "a"), ov_parameter(s1, t1, "b")
    node = o14.convert_promote_types(a, b, unsafe, pytorch, u64)
    xml = ov_save(tmp_path / "p.xml", [node.output(0), node.output(1)], [a, b])
    rng = np.random.default_rng(0)
    feeds = {"a": _data(rng, t0, [2 if d is None else d for d in s0]),
             "b": _data(rng, t1, [2 if d is None else d for d in s1])}
    got = run_onnx(xml, feeds)
    want_type = node.get_output_element_type(0).to_dtype()
    assert got[0].dtype == got[1].dtype == want_type
    oracle = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    ov_out = run_openvino(xml, feeds)
    for k in range(2):
        assert_bitexact(got[k], oracle[k], "oracle")
        assert_bitexact(got[k], feeds["ab"[k]].astype(want_type), "numpy astype")
        assert_bitexact(got[k], ov_out[k], "OpenVINO")


def test_declared_type_that_breaks_the_rules_is_refused(tmp_path):
    w = IRWriter()
    a, b = w.parameter([3], "u8", "a"), w.parameter([3], "i8", "b")
    attrs = {"promote_unsafe": "true", "pytorch_scalar_promotion": "false", "u64_integer_promotion_target": "f32"}
    y0, y1 = w.layer("ConvertPromoteTypes", "opset14", [a, b], attrs, [("i32", (3,)), ("i32", (3,))])
    w.result(y0)
    w.result(y1)
    with pytest.raises(InvalidLayer, match="declared i32.*give i16"):
        convert(w.save(tmp_path / "bad.xml"))
