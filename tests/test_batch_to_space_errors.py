"""BatchToSpace-2 / SpaceToBatch-2 validation: values known at convert time give a clear
InvalidLayer naming the layer; values known only at run time stop onnxruntime (never a wrong
result); the oracles validate like the spec."""
from __future__ import annotations

import numpy as np
import pytest

from ir2onnx.api import convert
from ir2onnx.cli.main import main
from ir2onnx.errors import InvalidLayer, Ir2OnnxError
from ir2onnx.testing import IRWriter, assert_bitexact, run_onnx
from test_batch_to_space_util import OPS, oracle, writer_ir

BAD = [  # op, data shape, block, begin, end, message fragment
    ("b2s", [8, 2], [1, 0], [0, 0], [0, 0], r"block_shape\[1\] = 0: values must be >= 1"),
    ("b2s", [8, 2], [1, -2], [0, 0], [0, 0], r"block_shape\[1\] = -2"),
    ("b2s", [8, 2], [2, 1], [0, 0], [0, 0], r"block_shape\[0\] = 2: the batch axis cannot be blocked"),
    ("b2s", [8, 2], [1, 2], [0, -1], [0, 0], r"crops_begin\[1\] = -1: values must be >= 0"),
    ("b2s", [8, 2], [1, 2], [0, 0], [1, 0], r"crops_end\[0\] = 1: the batch axis cannot be cropped"),
    ("b2s", [9, 2], [1, 2], [0, 0], [0, 0], r"batch 9 is not divisible by prod\(block_shape\) = 2"),
    ("b2s", [8, 2], [1, 2], [0, 3], [0, 2],
     r"crops_begin\[1\] \+ crops_end\[1\] = 5 exceeds block_shape\[1\] \* data dim 1 = 4"),
    ("b2s", [None, 2], [1, 2], [0, 3], [0, 2], r"= 5 exceeds"),
    ("b2s", [8], [1], [0], [0], r"data must have rank >= 2, got rank 1"),
    ("b2s", [8, 2], [1, 2, 1], [0, 0, 0], [0, 0, 0],
     r"inputs of unequal length: data has rank 2, block_shape has 3 values"),
    ("b2s", [8, 2], [1, 2], [0, 0, 0], [0, 0], r"crops_begin has 3 values"),
    ("s2b", [2, 4], [1, 2], [0, -1], [0, 1], r"pads_begin\[1\] = -1: values must be >= 0"),
    ("s2b", [2, 4], [1, 2], [1, 0], [0, 0], r"pads_begin\[0\] = 1: the batch axis cannot be padded"),
    ("s2b", [2, 3], [1, 2], [0, 0], [0, 0], r"padded data dim 1 = 3 is not divisible by block_shape\[1\] = 2"),
    ("s2b", [2, 4], [0, 2], [0, 0], [0, 0], r"block_shape\[0\] = 0"),
    ("s2b", [2, 4], [3, 1], [0, 0], [0, 0], r"block_shape\[0\] = 3: the batch axis cannot be blocked"),
    ("s2b", [4], [2], [0], [0], r"rank >= 2"),
    ("s2b", [2, 4], [1, 2], [0, 0], [0, 0, 0], r"pads_end has 3 values"),
]


@pytest.mark.parametrize("case", BAD, ids=[f"{c[0]}-{c[-1][:28]}" for c in BAD])
def test_invalid_values_known_at_convert_time(tmp_path, case):
    op, shape, B, lo, hi, message = case
    xml = writer_ir(tmp_path / "bad.xml", op, shape, B, lo, hi)
    with pytest.raises(InvalidLayer, match=message) as info:
        convert(xml)
    assert f"({OPS[op][0]}-opset2, id=" in str(info.value)  # names the layer, type and version


@pytest.mark.parametrize("op", ["b2s", "s2b"])
def test_invalid_values_are_one_line_on_the_cli(tmp_path, capsys, op):
    xml = writer_ir(tmp_path / "bad.xml", op, [8, 2], [1, 2], [0, -1], [0, 0])
    assert main(["convert", str(xml), "-o", str(tmp_path / "out.onnx")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "must be >= 0" in err and "opset2" in err
    assert not (tmp_path / "out.onnx").exists()


def test_non_integer_block_is_invalid(tmp_path):
    w = IRWriter("float_block")
    x = w.parameter([8, 2], "f32", "data")
    vecs = [w.const(np.array([1, 2], np.float32)), w.const(np.zeros(2, np.int64)), w.const(np.zeros(2, np.int64))]
    w.result(w.layer("BatchToSpace", "opset2", [x, *vecs], None, [("f32", [4, 4])])[0])
    with pytest.raises(InvalidLayer, match="block_shape must have an integer element type, got f32"):
        convert(w.save(tmp_path / "f.xml"))


RUNTIME_BAD = [  # op, data shape, block, begin, end (each violates the spec)
    ("b2s", [12, 4, 6], [1, 0, 3], [0, 0, 0], [0, 0, 0]),
    ("b2s", [12, 4, 6], [1, -1, 3], [0, 0, 0], [0, 0, 0]),
    ("b2s", [12, 4, 6], [2, 2, 3], [0, 0, 0], [0, 0, 0]),
    ("b2s", [12, 4, 6], [1, 2, 3], [0, -1, 0], [0, 1, 0]),
    ("b2s", [12, 4, 6], [1, 2, 3], [1, 0, 0], [0, 0, 0]),
    ("b2s", [12, 4, 6], [1, 2, 3], [0, 5, 0], [0, 4, 0]),
    ("b2s", [12, 4, 6], [1, 5, 1], [0, 0, 0], [0, 0, 0]),
    ("s2b", [2, 4, 6], [1, 2, 3], [0, -2, 0], [0, 0, 0]),
    ("s2b", [2, 4, 6], [1, 2, 3], [0, 0, 0], [1, 0, 0]),
    ("s2b", [2, 4, 6], [1, 2, 3], [0, 1, 0], [0, 0, 0]),
    ("s2b", [2, 4, 6], [2, 1, 1], [0, 0, 0], [0, 0, 0]),
    ("s2b", [2, 4, 6], [1, 0, 1], [0, 0, 0], [0, 0, 0]),
]


@pytest.mark.parametrize("case", RUNTIME_BAD, ids=[f"{c[0]}-{c[2]}-{c[3]}-{c[4]}" for c in RUNTIME_BAD])
def test_invalid_values_known_at_run_time_stop_onnxruntime(tmp_path, case):
    """Situation (c): a bad setting fails in onnxruntime instead of producing a wrong output; a
    good one through the same model still works."""
    op, shape, B, lo, hi = case
    good = ([1, 2, 3], [0, 1, 0], [0, 1, 0]) if op == "b2s" else ([1, 2, 3], [0, 1, 0], [0, 1, 0])
    xml = writer_ir(tmp_path / "rt.xml", op, shape, *good, runtime=True)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    ok = run_onnx(xml, [x] + [np.array(v, np.int64) for v in good])[0]
    assert_bitexact(ok, oracle(op, x, *good))
    with pytest.raises(Ir2OnnxError, match="onnxruntime failed"):
        run_onnx(xml, [x] + [np.array(v, np.int64) for v in (B, lo, hi)])
    with pytest.raises(InvalidLayer):
        oracle(op, x, B, lo, hi)


def test_crops_checked_at_run_time_when_the_dim_is_dynamic(tmp_path):
    """Constant crops on a dynamic spatial dim: too large for the fed shape -> onnxruntime stops."""
    xml = writer_ir(tmp_path / "d.xml", "b2s", [None, None], [1, 2], [0, 3], [0, 2])
    x = np.arange(12, dtype=np.float32).reshape(4, 3)  # 3 * 2 = 6 >= 5: valid
    assert_bitexact(run_onnx(xml, [x])[0], oracle("b2s", x, [1, 2], [0, 3], [0, 2]))
    with pytest.raises(Ir2OnnxError, match="onnxruntime failed"):
        run_onnx(xml, [x[:, :2].copy()])  # 2 * 2 = 4 < 5


@pytest.mark.parametrize("op,inputs,message", [
    ("b2s", [np.zeros((8, 2)), [1, 2, 1], [0, 0, 0], [0, 0, 0]], "unequal length"),
    ("b2s", [np.zeros(8), [1], [0], [0]], "rank >= 2"),
    ("b2s", [np.zeros((9, 2)), [1, 2], [0, 0], [0, 0]], "not divisible"),
    ("b2s", [np.zeros((8, 2)), [1, 2], [0, 3], [0, 2]], "exceed"),
    ("b2s", [np.zeros((8, 2)), [1, 2], [0, 0.5], [0, 0]], "integer"),
    ("s2b", [np.zeros((2, 3)), [1, 2], [0, 0], [0, 0]], "not divisible"),
    ("s2b", [np.zeros((2, 4)), [1, 2], [0, -2], [0, 0]], ">= 0"),
])
def test_oracles_validate_like_the_spec(op, inputs, message):
    from ir2onnx.oracles.registry import oracle_for

    fn = oracle_for(OPS[op][0], "opset2")
    with pytest.raises(InvalidLayer, match=message):
        fn(None, [np.asarray(v) for v in inputs])
