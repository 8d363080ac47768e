"""``ir2onnx check`` on INT8 IRs: float outputs are judged at task level by the rule table of
:mod:`ir2onnx.harness.rules` (share within one quantization step: :mod:`ir2onnx.harness.int8_rule`;
argmax agreement for classes), so the bundled NNCF sample passes its own check, while a broken
conversion still fails."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov

from ir2onnx.cli.main import main
from ir2onnx.harness.check import check
from ir2onnx.harness.int8_rule import output_steps
from ir2onnx.harness.rules import Task, judge
from ir2onnx.ir.reader import load_ir
from ir2onnx.lowering.registry import LOWERINGS
from ir2onnx.harness.report import format_text, to_markdown

NNCF3 = Path(__file__).resolve().parents[1] / "samples" / "real" / "nncf_resnet3" / "model.xml"
NNCF1 = NNCF3.parent.parent / "nncf_resnet1" / "model.xml"


def compare_int8(name, a_name, a, b_name, b, step):
    """One output judged as :func:`check` judges it in an INT8 IR: on its grid, else as logits."""
    task = Task("int8 step", step=step) if step is not None else Task("class", layout="logits")
    return judge(name, task, a_name, {name: a}, b_name, {name: b}, tolerant=True)


def test_the_bundled_int8_sample_passes_its_own_check(capsys):
    assert main(["check", str(NNCF3)]) == 0
    captured = capsys.readouterr()
    out = captured.out
    feature = out.split("output 'Result_87247'")[1]
    assert "ort:cpu vs oracle" in feature and "within 1 step (0.0459)" in feature and "equal" in feature
    assert "oracle vs openvino" in feature and "within 4" in feature
    assert "argmax agrees on 100% of 1 row(s)" in out.split("output 'Result_87246'")[1]
    assert "result  PASS" in out and "note    the IR has 12 FakeQuantize layer(s)" in out
    assert "check: oracle ok" in captured.err


def test_step_is_the_last_fake_quantize_before_the_output():
    """The feature map is a FakeQuantize's output (step = its output range / (levels - 1), as
    OpenVINO reads it); the logits come out of a MatMul: no step, judged as classes."""
    model = ov.Core().read_model(NNCF3)
    fq = model.get_results()[1].input_value(0).get_node()
    lo, hi = (fq.input_value(i).get_node().get_data() for i in (3, 4))
    steps = output_steps(load_ir(NNCF3))
    assert steps["Result_87246"] is None
    assert np.isclose(steps["Result_87247"], float(np.max(hi - lo)) / (fq.get_levels() - 1))


def test_a_broken_output_fails_the_rule():
    result = check(NNCF3, openvino=False)
    ort, oracle = (result.backend(n).outputs for n in ("ort:cpu", "oracle"))
    step = output_steps(load_ir(NNCF3))["Result_87247"]
    feature, logits = oracle["Result_87247"], oracle["Result_87246"]
    assert compare_int8("f", "ort:cpu", ort["Result_87247"], "oracle", feature, step).passed
    # 5% of the elements two steps off: fails against the oracle, and against OpenVINO's looser bar
    broken = feature.copy()
    broken.reshape(-1)[::20] += 2 * step
    c = compare_int8("f", "ort:cpu", broken, "oracle", feature, step)
    assert not c.passed and c.rule == "int8 step" and "95.00% within 1 step" in c.detail
    broken.reshape(-1)[1::20] += 5 * step
    assert not compare_int8("f", "ort:cpu", broken, "openvino", feature, step).passed
    # every element one level down (rounding down instead of to nearest): within a step, not equal
    c = compare_int8("f", "ort:cpu", feature - step, "oracle", feature, step)
    assert not c.passed and "100.00% within 1 step" in c.detail and "0.00% equal" in c.detail
    # a class output whose argmax moves, or whose values drift by more than 1% of the range
    swapped = logits.copy()
    top = int(np.argmax(logits[0]))
    swapped[0, top] = logits[0].min() - 1
    c = compare_int8("l", "ort:cpu", swapped, "oracle", logits, None)
    assert not c.passed and c.rule == "class" and "argmax agrees on 0%" in c.detail
    drift = logits + 0.02 * np.ptp(logits)
    assert not compare_int8("l", "ort:cpu", drift, "oracle", logits, None).passed
    assert compare_int8("l", "ort:cpu", ort["Result_87246"], "oracle", logits, None).passed


def test_a_broken_lowering_still_fails_the_check(capsys, monkeypatch):
    """The residual Add lowered as a subtraction: both outputs fail against the oracle."""
    right = LOWERINGS[("Add", "opset1")]

    def wrong(ctx, layer, inputs):
        if "aten::add" not in layer.name:
            return right(ctx, layer, inputs)
        return [ctx.b.Sub(inputs[0].name, inputs[1].name)]

    monkeypatch.setitem(LOWERINGS, ("Add", "opset1"), wrong)
    assert main(["check", str(NNCF3), "--no-openvino", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "output 'Result_87247': ort:cpu and oracle disagree (int8 step rule:" in out
    assert "output 'Result_87246': ort:cpu and oracle disagree (class rule:" in out


def test_tolerances_given_judge_int8_outputs_elementwise():
    """--rtol/--atol: every output element-wise, and the note says why INT8 outputs differ."""
    result = check(NNCF1, oracle=False, rtol=1e-4, atol=1e-4)
    assert not result.ok and result.notes[0].startswith("the IR has 6 FakeQuantize layer(s)")
    assert all(not c.rule for o in result.outputs for c in o.comparisons)
    assert "note    the IR has 6 FakeQuantize" in format_text(result)
    assert "- note: the IR has 6 FakeQuantize" in to_markdown(result)
    result = check(NNCF1, oracle=False)
    assert result.ok and "- note: the IR has 6 FakeQuantize" in to_markdown(result)
