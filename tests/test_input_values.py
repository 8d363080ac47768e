"""Generated inputs that mean something (issue 23): indices within the table they index, ones for
masks, zeros for token types, positions in order; NaN or Inf in an output warned about by `run`
and a problem of `check` when the inputs were generated."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.harness.backends import make_feeds
from ir2onnx.cli.main import main
from ir2onnx.runtime.input_values import Hint, generate, ir_hints, nonfinite, onnx_file_hints
from ir2onnx.testing import ov_parameter, ov_save

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "real"
TRANSFORMERS = ["bert", "distilbert", "gpt2", "llama", "t5_encoder"]


def _lookup(tmp_path, rows=5, name="tokens"):
    """tokens (i64 [?, ?]) -> Convert i32 -> Reshape -> Gather(table [rows, 3], axis 0)."""
    ids = ov_parameter([None, None], np.int64, name)
    table = ops.constant(np.arange(rows * 3, dtype=np.float32).reshape(rows, 3))
    flat = ops.reshape(ops.convert(ids, "i32"), ops.constant(np.array([-1], np.int64)), False)
    out = ops.gather(table, flat, ops.constant(np.int32(0)))
    return ov_save(tmp_path / "lookup.xml", out, [ids])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_indices_stay_within_the_table(tmp_path, seed):
    xml = _lookup(tmp_path, rows=5)
    graph = ir2onnx.load_ir(xml)
    assert ir_hints(graph) == {"tokens": Hint(5)}
    feeds, origin = make_feeds(graph, shapes={"tokens": (4, 16)}, seed=seed)
    ids = feeds["tokens"]
    assert ids.min() >= 0 and ids.max() < 5 and len(np.unique(ids)) > 1
    assert origin["tokens"] == f"random indices in [0, 5) (seed {seed})"
    # the same from the ONNX file (run on an .onnx): its Gather's table, through the bounds guard
    ir2onnx.convert_file(xml, tmp_path / "lookup.onnx")
    assert onnx_file_hints(tmp_path / "lookup.onnx") == {"tokens": Hint(5)}
    out = ir2onnx.run(tmp_path / "lookup.onnx", shapes={"tokens": (4, 16)}, seed=seed)
    rows = np.arange(15, dtype=np.float32).reshape(5, 3)
    np.testing.assert_array_equal(out[next(iter(out))], rows[ids.reshape(-1)])


def test_the_seed_still_decides(tmp_path):
    graph = ir2onnx.load_ir(_lookup(tmp_path, rows=50))
    a = make_feeds(graph, shapes={"tokens": (2, 8)}, seed=0)[0]["tokens"]
    b = make_feeds(graph, shapes={"tokens": (2, 8)}, seed=0)[0]["tokens"]
    c = make_feeds(graph, shapes={"tokens": (2, 8)}, seed=1)[0]["tokens"]
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("name,dtype,expected", [
    ("attention_mask", np.int64, np.ones((2, 4), np.int64)),
    ("encoder_attention_mask", np.bool_, np.ones((2, 4), bool)),
    ("token_type_ids", np.int64, np.zeros((2, 4), np.int64)),
    ("position_ids", np.int64, np.array([[0, 1, 2, 3]] * 2)),
])
def test_inputs_named_for_what_they_hold(name, dtype, expected):
    value, _ = generate(name, (2, 4), dtype, np.random.default_rng(0), None)
    assert value.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(value, expected)


def test_positions_wrap_within_their_table():
    value, _ = generate("position_ids", (1, 6), np.int64, np.random.default_rng(0), Hint(4))
    np.testing.assert_array_equal(value, [[0, 1, 2, 3, 0, 1]])


def test_other_inputs_stay_random():
    value, how = generate("x", (3,), np.float32, np.random.default_rng(0), None)
    assert value is None and how == "random"


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_the_bundled_transformers_run_to_finite_outputs(capsys, name):
    """`ir2onnx run` on the samples made by make_real_transformers.py: ids within the vocabulary
    (64 rows), masks of ones, every output finite and no warning."""
    xml = SAMPLES / name / "model.xml"
    assert main(["run", str(xml), "--shape", "input_ids=2,7", "--shape", "attention_mask=2,7"]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.err, captured.err
    assert "input attention_mask: shape [2, 7] int64  min 1 max 1" in captured.out
    ids_line = next(line for line in captured.out.splitlines() if line.startswith("input input_ids"))
    low, high = float(ids_line.split("min ")[1].split()[0]), float(ids_line.split("max ")[1].split()[0])
    assert 0 <= low and high < 64, ids_line
    outputs = ir2onnx.run(xml, shapes={"input_ids": (2, 7), "attention_mask": (2, 7)})
    assert outputs and not nonfinite(outputs)
    assert all(np.isfinite(v).all() for v in outputs.values())


def _sqrt_of_mask(tmp_path, name="attention_mask"):
    """A model that only makes sense for a 0/1 mask: sqrt(mask) is NaN for negative values."""
    mask = ov_parameter([None, None], np.int64, name)
    return ov_save(tmp_path / f"{name}.xml", ops.sqrt(ops.convert(mask, "f32")), [mask])


def test_a_mask_is_fed_ones(tmp_path):
    out = ir2onnx.run(_sqrt_of_mask(tmp_path), shapes={"attention_mask": (2, 7)})
    np.testing.assert_array_equal(next(iter(out.values())), np.ones((2, 7), np.float32))


def test_run_warns_of_nan_outputs(capsys, tmp_path):
    xml = _sqrt_of_mask(tmp_path, "values")  # not a mask: random integers, some negative
    assert main(["run", str(xml), "--shape", "values=2,7"]) == 0
    err = capsys.readouterr().err
    assert "warning: output" in err and "NaN" in err and "give real ones with --input" in err, err


def test_check_reports_nan_from_generated_inputs_as_a_problem(capsys, tmp_path):
    xml = _sqrt_of_mask(tmp_path, "values")
    result = ir2onnx.check(xml, shapes={"values": (2, 7)}, openvino=False)
    assert not result.ok
    assert any("NaN" in f and "generated inputs" in f for f in result.failures()), result.failures()
    assert main(["check", str(xml), "--shape", "values=2,7", "--no-openvino"]) == 1
    # given inputs: the model's own NaN, a note and not a problem
    given = {"values": np.array([[-1, 4]], np.int64)}
    result = ir2onnx.check(xml, inputs=given, openvino=False)
    assert result.ok, result.failures()
    assert any("NaN" in n for n in result.notes)


def test_inputs_tied_by_name_or_symbol_share_the_given_dims():
    from ir2onnx.runtime.input_values import shared_dims

    declared = {"input_ids": (None, None), "attention_mask": (None, None), "token_type_ids": (None, None),
                "position_ids": (1, None), "pixels": (None, 3), "a": ("batch", "seq", 4), "b": ("batch", 2)}
    tied = shared_dims(declared, {"input_ids": (2, 7), "a": (5, 6, 4)})
    assert tied == {"attention_mask": (2, 7), "token_type_ids": (2, 7), "position_ids": (1, 7), "b": (5, 2)}
    assert shared_dims(declared, {}) == {}  # nothing given: every dynamic dim stays 1, as before


def test_bert_at_a_given_shape_runs_finite(capsys):
    """`run bert --shape input_ids=2,7`: attention_mask is fed [2, 7] ones, not [1, 1] (NaN)."""
    bert = SAMPLES / "bert" / "model.xml"
    assert main(["run", str(bert), "--shape", "input_ids=2,7"]) == 0
    captured = capsys.readouterr()
    assert "input attention_mask: shape [2, 7] int64  min 1 max 1" in captured.out
    assert "NaN" not in captured.err
    feeds, _ = make_feeds(ir2onnx.load_ir(bert), shapes={"input_ids": (2, 7)})  # check's feeds
    assert feeds["attention_mask"].shape == (2, 7) and feeds["input_ids"].shape == (2, 7)


def test_operation_parameters_get_values_valid_for_any_model(tmp_path):
    """Inputs traced to a Range's start/stop/step and to an Interpolate's scales get 0, 4, 1 and
    ones (random normal scales made Resize fail: "Scale value should be greater than 0")."""
    from ir2onnx.ir.reader import load_ir
    from ir2onnx.runtime.input_values import ROLES

    start, stop, step = (ov_parameter([], np.int64, n) for n in ("a", "b", "c"))
    x, scales = ov_parameter([1, 1, 2, 2], name="x"), ov_parameter([2], name="s")
    r = ops.range(start, stop, step, "i64")
    y = ops.interpolate(x, scales, "linear", "scales", axes=ops.constant(np.array([2, 3], np.int64)))
    graph = load_ir(ov_save(tmp_path / "p.xml", [r, y], [start, stop, step, x, scales]))
    hints = ir_hints(graph)
    assert {k: h.role for k, h in hints.items()} == {"a": "start", "b": "limit", "c": "delta", "s": "scale"}
    rng = np.random.default_rng(0)
    assert [generate(n, (), np.int64, rng, hints[n])[0] for n in "abc"] == [0, 4, 1]
    value, how = generate("s", (2,), np.float32, rng, hints["s"])
    assert value.tolist() == [1.0, 1.0] and how == ROLES["scale"][1]
    assert generate("limit", (), np.int32, rng, None)[0] == 4  # by name: a Range expanded into a Loop
    assert generate("limit", (3,), np.int32, rng, None)[1] == "random"  # not one element: not a limit
