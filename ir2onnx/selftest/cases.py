"""The selftest's built-in case table: small IR models per op family, as data.

A :class:`Case` names the op it tests (the matrix row), a function that writes its IR into a
folder (with OpenVINO's own ``save_model`` when OpenVINO can express the model, else with
:class:`~ir2onnx.testing.IRWriter`), the inputs, and what the spec says the outputs are
(``expect``: a shape, or values). Every worked example of the specs in ``specs/`` is a case.
Families live in ``selftest_movement.py``, ``selftest_shape.py`` and ``selftest_arith.py``;
:func:`all_cases` gathers them. Cases whose op has no lowering yet are reported by the selftest,
not crashed on, so cases may run ahead of the lowerings.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

Inputs = Callable[[np.random.Generator], dict] | dict | None


@dataclass(frozen=True)
class Case:
    """One selftest case.

    ``build(folder) -> xml path``; ``inputs`` gives some or all feeds (the rest are random);
    ``shapes`` the dims of dynamic inputs; ``expect`` maps an output name to its spec'd shape
    (a tuple), its values (an array) or a function of the feeds giving the values; ``exact``
    demands bit-exact agreement with the oracle (data movement); ``invalid`` means the spec calls
    the model an error: conversion and oracle must both refuse it; ``openvino`` is False where
    OpenVINO cannot run the IR (TensorFlow layouts and other IRWriter-only attributes);
    ``openvino_deviates`` names a known, measured deviation of OpenVINO's CPU plugin from the
    spec (its column then says ``deviates`` instead of failing when it disagrees).
    """

    name: str
    op: tuple[str, str]
    build: Callable[[Path], Path]
    inputs: Inputs = None
    shapes: dict = field(default_factory=dict)
    expect: dict[str, Any] = field(default_factory=dict)
    exact: bool = True
    invalid: bool = False
    openvino: bool = True
    source: str = ""
    openvino_deviates: str = ""

    @property
    def row(self) -> str:
        return f"{self.op[0]}-{self.op[1]}"

    def feeds(self, rng: np.random.Generator) -> dict:
        if self.inputs is None:
            return {}
        return dict(self.inputs(rng) if callable(self.inputs) else self.inputs)


def ov_build(make: Callable, compress: bool = False, name: str = "case") -> Callable[[Path], Path]:
    """A ``build`` that calls ``make(ops)`` -> (outputs, parameters) with ``openvino.opset15``
    and saves the model. Outputs are ``(node_or_output, tensor_name)`` pairs."""

    def build(folder: Path) -> Path:
        import openvino as ov
        import openvino.opset15 as ops

        outputs, params = make(ops)
        results = []
        for node, tensor_name in outputs:
            out = node.output(0) if hasattr(node, "output") else node
            out.get_tensor().set_names({tensor_name})
            results.append(ops.result(out))
        model = ov.Model(results, params, name)
        path = Path(folder) / f"{name}.xml"
        ov.save_model(model, str(path), compress_to_fp16=compress)
        return path

    return build


def ir_build(make: Callable, name: str = "case") -> Callable[[Path], Path]:
    """A ``build`` that calls ``make(writer)`` on an :class:`~ir2onnx.testing.IRWriter`."""

    def build(folder: Path) -> Path:
        from .testing import IRWriter

        w = IRWriter(name)
        make(w)
        return w.save(Path(folder) / f"{name}.xml")

    return build


def param(ops, shape, dtype=np.float32, name="x"):
    """An OpenVINO Parameter whose tensor is named ``name`` (``None`` dims are dynamic)."""
    import openvino as ov

    p = ops.parameter(ov.PartialShape([-1 if d is None else d for d in shape]), dtype, name=name)
    p.output(0).get_tensor().set_names({name})
    return p


def const(ops, values, dtype=np.int64):
    return ops.constant(np.asarray(values, dtype=dtype))


def iota(shape, dtype=np.float32, start=1) -> np.ndarray:
    """``start, start+1, ...`` in ``shape`` (the specs' worked examples count from 1)."""
    return (np.arange(int(np.prod(shape))) + start).reshape(shape).astype(dtype)


# -- Parameter, Const, Result, Convert -------------------------------------------------------------
def _passthrough(ops):
    x = param(ops, [2, 3], np.float32)
    return [(x, "x")], [x]  # an input that is also an output: the output takes the Result's name


def _one_tensor_two_results(ops):
    x = param(ops, [3], np.int32)
    y = ops.convert(x, "f32")
    return [(y, "y"), (y, "y")], [x]


def _const_only(w):
    c = w.const(np.array([[1.5, -2.0], [0.0, 3.25]], np.float32), name="table")
    w.result(c, name="table_out")


def _two_outputs(ops):
    x = param(ops, [2, 2], np.int32)
    return [(ops.convert(x, "f32"), "b_first"), (ops.convert(x, "i64"), "a_second")], [x]


def _convert(src, dst, shape=(2, 3)):
    def make(ops):
        x = param(ops, list(shape), src)
        return [(ops.convert(x, dst), "y")], [x]
    return make


def _const_convert(w):
    c = w.const(np.linspace(-2, 2, 6000).astype(np.float16).reshape(2, 3000), name="weights")
    y = w.layer("Convert", "opset1", [c], {"destination_type": "f32"}, [("f32", (2, 3000))], out_names=["y"])[0]
    w.result(y)


def _in_range(dtype, low=-100, high=100):
    return lambda rng: {"x": rng.uniform(low, high, (2, 3)).astype(dtype)}


CORE = [
    Case("core/passthrough", ("Parameter", "opset1"), ov_build(_passthrough)),
    Case("core/const-output", ("Const", "opset1"), ir_build(_const_only),
         expect={"table_out": np.array([[1.5, -2.0], [0.0, 3.25]], np.float32)}),
    Case("core/two-outputs-by-name", ("Result", "opset1"), ov_build(_two_outputs)),
    Case("core/one-tensor-two-results", ("Result", "opset1"), ov_build(_one_tensor_two_results)),
    Case("convert/f32-i32", ("Convert", "opset1"), ov_build(_convert(np.float32, "i32")),
         inputs=_in_range(np.float32)),
    Case("convert/f32-u8", ("Convert", "opset1"), ov_build(_convert(np.float32, "u8")),
         inputs=_in_range(np.float32, 0, 255)),
    Case("convert/f32-f16", ("Convert", "opset1"), ov_build(_convert(np.float32, "f16"))),
    Case("convert/f16-f32", ("Convert", "opset1"), ov_build(_convert(np.float16, "f32"))),
    Case("convert/f64-f32", ("Convert", "opset1"), ov_build(_convert(np.float64, "f32"))),
    Case("convert/i32-f32", ("Convert", "opset1"), ov_build(_convert(np.int32, "f32"))),
    Case("convert/i64-i8", ("Convert", "opset1"), ov_build(_convert(np.int64, "i8"))),
    Case("convert/u8-i32", ("Convert", "opset1"), ov_build(_convert(np.uint8, "i32"))),
    Case("convert/f32-boolean", ("Convert", "opset1"), ov_build(_convert(np.float32, "boolean")),
         inputs=lambda rng: {"x": np.array([[0.0, -0.0, 0.5], [-2.0, 0.0, 1e-30]], np.float32)},
         expect={"y": np.array([[False, False, True], [True, False, True]])}),
    Case("convert/boolean-i32", ("Convert", "opset1"), ov_build(_convert(np.bool_, "i32"))),
    Case("convert/f16-const-weights", ("Convert", "opset1"), ir_build(_const_convert)),
]


def all_cases() -> list[Case]:
    """Every built-in case, core first, then each op family."""
    from . import selftest_arith, selftest_movement, selftest_nn, selftest_shape
    from . import selftest_nn2
    from . import selftest_nn3
    from . import selftest_quant
    from . import selftest_misc
    from . import selftest_move2
    from . import selftest_rnn
    from . import selftest_norm2
    from . import selftest_nms

    cases = CORE + selftest_movement.CASES + selftest_shape.CASES + selftest_arith.CASES + selftest_nn.CASES
    cases += selftest_nn2.CASES
    cases += selftest_nn3.CASES
    cases += selftest_quant.CASES
    cases += selftest_misc.CASES
    cases += selftest_move2.CASES
    cases += selftest_rnn.CASES
    cases += selftest_norm2.CASES
    cases += selftest_nms.CASES
    names = [c.name for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise RuntimeError(f"selftest cases named twice: {sorted(dup)}")
    return cases
