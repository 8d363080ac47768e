"""Property tests: random valid shapes, blocks and crops/pads -> onnxruntime == oracle, in every
formulation and input situation; and BatchToSpace(SpaceToBatch(x, B, P, P), B, P, P) == x."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import ir2onnx.ops.batch_to_space as b2s_mod
from ir2onnx.testing import IRWriter, assert_bitexact
from test_batch_to_space_util import TYPES, data, oracle, run_ort, writer_ir


@st.composite
def b2s_cases(draw):
    rank = draw(st.integers(2, 6))
    block = [1] + [draw(st.integers(1, 3)) for _ in range(rank - 1)]
    dims = [draw(st.integers(0 if draw(st.booleans()) and draw(st.booleans()) else 1, 3)) for _ in range(rank - 1)]
    batch = draw(st.integers(0, 2)) * math.prod(block)
    lo, hi = [0], [0]
    for d, b in zip(dims, block[1:]):
        lo.append(draw(st.integers(0, d * b)))
        hi.append(draw(st.integers(0, d * b - lo[-1])))
    return [batch] + dims, block, lo, hi


@st.composite
def s2b_cases(draw):
    rank = draw(st.integers(2, 5))
    block = [1] + [draw(st.integers(1, 3)) for _ in range(rank - 1)]
    dims = [draw(st.integers(0, 3)) for _ in range(rank - 1)]
    lo, hi = [0], [0]
    for d, b in zip(dims, block[1:]):
        lo.append(draw(st.integers(0, 2 * b)))
        hi.append((-(d + lo[-1])) % b + b * draw(st.integers(0, 1)))
    return [draw(st.integers(1, 2))] + dims, block, lo, hi


SETUP = st.tuples(st.sampled_from([None, "chain", "gather"]), st.sampled_from(["static", "dynamic", "runtime"]),
                  st.sampled_from(["f32", "i8", "f16", "boolean", "i64", "bf16", "u16"]))


def _run(tmp, op, case, setup):
    shape, block, lo, hi = case
    form, situation, etype = setup
    b2s_mod.FORMULATION = form
    try:
        dims = [None] + shape[1:] if situation == "dynamic" else shape
        xml = writer_ir(tmp / f"{op}.xml", op, shape, block, lo, hi, etype=etype,
                        runtime=situation == "runtime", data_shape=dims)
        x = data(shape, TYPES[etype], seed=sum(shape))
        feeds = [x] + ([np.array(v, np.int64) for v in (block, lo, hi)] if situation == "runtime" else [])
        expected = oracle(op, x, block, lo, hi)
        assert_bitexact(run_ort(xml, feeds, expected), expected, f"{op} {case} {setup}")
    finally:
        b2s_mod.FORMULATION = None


@given(case=b2s_cases(), setup=SETUP)
def test_batch_to_space_matches_oracle(tmp_path_factory, case, setup):
    _run(tmp_path_factory.mktemp("p"), "b2s", case, setup)


@given(case=s2b_cases(), setup=SETUP)
def test_space_to_batch_matches_oracle(tmp_path_factory, case, setup):
    _run(tmp_path_factory.mktemp("p"), "s2b", case, setup)


@given(case=s2b_cases(), form=st.sampled_from([None, "chain", "gather"]), dynamic=st.booleans())
def test_round_trip_is_identity(tmp_path_factory, case, form, dynamic):
    """BatchToSpace(SpaceToBatch(x, B, P, P), B, P, P) == x through one converted model."""
    shape, block, lo, hi = case
    w = IRWriter("round_trip")
    x_ref = w.parameter([None] + shape[1:] if dynamic else shape, "f32", "data")
    vecs = [w.const(np.array(v, np.int64)) for v in (block, lo, hi)]
    mid = w.layer("SpaceToBatch", "opset2", [x_ref, *vecs], None, [("f32", [None] * len(shape))])[0]
    y = w.layer("BatchToSpace", "opset2", [mid, *vecs], None, [("f32", [None] * len(shape))], out_names=["y"])[0]
    w.result(y)
    xml = w.save(tmp_path_factory.mktemp("rt") / "rt.xml")
    b2s_mod.FORMULATION = form
    try:
        x = data(shape, np.float32, seed=len(shape))
        assert_bitexact(run_ort(xml, [x]), x, f"{case} {form}")
    finally:
        b2s_mod.FORMULATION = None
