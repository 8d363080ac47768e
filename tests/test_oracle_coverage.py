"""Every registered lowering has an oracle (so `check` can always compare) and a selftest case, and
the three sit in modules of the same name: the lowering in ir2onnx/ops/<family>.py, its oracle in
ir2onnx/oracles/<family>.py, its cases in ir2onnx/selftest/<family>.py."""
from __future__ import annotations

import importlib

import ir2onnx.ops  # noqa: F401  (fills the lowering table)
from ir2onnx.lowering.registry import LOWERINGS, supported
from ir2onnx.oracles.interpreter import BUILTIN
from ir2onnx.oracles.registry import ORACLES, oracle_for
from ir2onnx.selftest import all_cases
from ir2onnx.selftest.catalog import FAMILIES


def _family(fn) -> str:
    return fn.__module__.rpartition(".")[2]


def test_every_lowering_has_an_oracle():
    missing = [f"{t}-{v}" for t, v in supported() if (t, v) not in BUILTIN and oracle_for(t, v) is None]
    assert not missing, f"lowerings without an oracle (add one in ir2onnx/oracles/): {missing}"


def test_interpreter_builtins_are_real_ops():
    assert BUILTIN <= set(supported())
    assert not BUILTIN & set(ORACLES), "a built-in op must not also have an oracle"


def test_every_oracle_sits_in_the_module_named_like_its_lowerings():
    wrong = {f"{t}-{v}": (f"ops/{_family(LOWERINGS[(t, v)])}.py", f"oracles/{_family(ORACLES.get((t, v)))}.py")
             for t, v in supported() if (t, v) in ORACLES and _family(LOWERINGS[(t, v)]) != _family(ORACLES[(t, v)])}
    assert not wrong, f"lowering and oracle in modules of different names: {wrong}"
    strays = sorted(f"{t}-{v}" for t, v in ORACLES if (t, v) not in LOWERINGS)
    assert not strays, f"oracles without a lowering: {strays}"


def test_every_lowering_has_a_selftest_case():
    covered = {c.op for c in all_cases()}
    missing = [f"{t}-{v}" for t, v in supported() if (t, v) not in covered]
    assert not missing, f"ops without a case in the selftest table (ir2onnx/selftest/<family>.py): {missing}"


def test_every_case_sits_in_the_module_named_like_its_lowering():
    """The cases of Eye are in selftest/generation.py because Eye's lowering is in ops/generation.py."""
    wrong = []
    for module in FAMILIES:
        family = module.__name__.rpartition(".")[2]
        importlib.import_module(f"ir2onnx.ops.{family}")
        wrong += [f"{c.name} ({c.row}) in selftest/{family}.py, lowering in ops/{_family(LOWERINGS[c.op])}.py"
                  for c in module.CASES if c.op in LOWERINGS and _family(LOWERINGS[c.op]) != family]
    assert not wrong, wrong


def test_every_worked_example_of_the_specs_is_a_case():
    sources = {c.source for c in all_cases()}
    wanted = ([f"BatchToSpace.md worked example {i}" for i in (1, 2)]
              + [f"Reshape.md worked example {i}" for i in range(1, 6)]
              + [f"ConvolutionBackpropData.md example {i}" for i in (1, 2, 3)]
              + [f"DepthToSpace.md TF example {i}" for i in (1, 2, 3)])
    assert not [w for w in wanted if w not in sources]
