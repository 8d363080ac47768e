"""What a selftest case is, and the builders the case modules share.

A :class:`Case` names the op it tests (the matrix row), a function that writes its IR into a
folder (with OpenVINO's own ``save_model`` when OpenVINO can express the model, else with
:class:`~ir2onnx.testing.IRWriter`), the inputs, and what the spec says the outputs are
(``expect``: a shape, or values). Every worked example of the specs in ``specs/`` is a case.
The cases of each op family live in the module of the family's name (``selftest/elementwise.py``
beside ``ops/elementwise.py`` and ``oracles/elementwise.py``); :func:`~.catalog.all_cases`
gathers them. Cases whose op has no lowering yet are reported by the selftest, not crashed on,
so cases may run ahead of the lowerings.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..testing import IRWriter

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
    spec (its column then says ``deviates`` instead of failing when it disagrees); ``min_opset``
    is the ONNX opset the case's lowering needs (it converts at the higher of it and the run's).
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
    min_opset: int | None = None

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


def ov_compressed(make: Callable) -> Callable[[Path], Path]:
    """:func:`ov_build` with OpenVINO's FP16 weight compression (f16 Const -> Convert f32)."""
    return ov_build(make, compress=True)


def unary(fn, *args, shape=(2, 3, 4), dtype=np.float32):
    """``make`` for ``openvino.opset15.<fn>(x, *args)`` of one input ``x`` (output ``y``)."""
    def make(ops):
        x = param(ops, list(shape), dtype)
        return [(getattr(ops, fn)(x, *args), "y")], [x]
    return make


def one_input(build, opset="opset15", shape=(2, 3, 4)):
    """``make`` for ``build(openvino.<opset>, x)`` of one f32 input ``x`` (output ``y``): for ops
    whose builder takes attributes, or lives in an older opset."""
    def make(ops):
        x = param(ops, list(shape))
        return [(build(importlib.import_module(f"openvino.{opset}"), x), "y")], [x]
    return make


def binary(fn, a_shape, b_shape, dtype=np.float32, **kw):
    """``make`` for ``openvino.opset15.<fn>(a, b, **kw)`` of two inputs ``a``, ``b`` (output ``y``)."""
    def make(ops):
        a, b = param(ops, a_shape, dtype, "a"), param(ops, b_shape, dtype, "b")
        return [(getattr(ops, fn)(a, b, **kw), "y")], [a, b]
    return make


def uniform(low, high, shape=(2, 3, 4), name="x"):
    """Feeds: input ``name`` uniform in [low, high) as f32."""
    return lambda rng: {name: rng.uniform(low, high, shape).astype(np.float32)}


def normal(scale=3.0, shape=(2, 3, 4)):
    """Feeds: input ``x`` normal with standard deviation ``scale``, as f32."""
    return lambda rng: {"x": (rng.standard_normal(shape) * scale).astype(np.float32)}
