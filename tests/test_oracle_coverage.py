"""Every registered lowering has an oracle (so `check` can always compare) and a selftest case."""
from __future__ import annotations

from ir2onnx.lowering.registry import supported
from ir2onnx.oracles.interpreter import BUILTIN
from ir2onnx.oracles.registry import ORACLES, oracle_for
from ir2onnx.selftest import all_cases


def test_every_lowering_has_an_oracle():
    missing = [f"{t}-{v}" for t, v in supported() if (t, v) not in BUILTIN and oracle_for(t, v) is None]
    assert not missing, f"lowerings without an oracle (add one in ir2onnx/oracles/): {missing}"


def test_interpreter_builtins_are_real_ops():
    assert BUILTIN <= set(supported())
    assert not BUILTIN & set(ORACLES), "a built-in op must not also have an oracle"


def test_every_lowering_has_a_selftest_case():
    covered = {c.op for c in all_cases()}
    missing = [f"{t}-{v}" for t, v in supported() if (t, v) not in covered]
    assert not missing, f"ops without a case in the selftest table (ir2onnx/selftest/<family>.py): {missing}"


def test_every_worked_example_of_the_specs_is_a_case():
    sources = {c.source for c in all_cases()}
    wanted = ([f"BatchToSpace.md worked example {i}" for i in (1, 2)]
              + [f"Reshape.md worked example {i}" for i in range(1, 6)]
              + [f"ConvolutionBackpropData.md example {i}" for i in (1, 2, 3)]
              + [f"DepthToSpace.md TF example {i}" for i in (1, 2, 3)])
    assert not [w for w in wanted if w not in sources]
