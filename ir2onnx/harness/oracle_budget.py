"""How much work the oracle interpreter has on a model, estimated before it runs, so that
``ir2onnx check`` can skip the oracle side of a model too large for it (``--oracle-budget``).

The estimate counts, per layer, the multiply-adds of the layers that contract (MatMul,
Convolution and its grouped and transposed forms, ScaledDotProductAttention, Einsum) and the
output elements of every other layer, summed over the model, loop and branch bodies counted once.
The shapes are the IR's port shapes; a dynamic dim counts as 1, and the sum over the layers with a
dynamic dim is then scaled by how many times more elements the check's inputs hold than those
inputs with their dynamic dims at 1 (the largest ratio over the inputs): exact for a static
model, linear in the batch and sequence or image size for a dynamic one (a transformer's attention, quadratic in the sequence, is then
underestimated; it is a small share of a BERT-base's work up to ~512 tokens).

Measured by ``benchmarks/oracle_speed.py`` (2026-11-28, a shared 2-core machine, numpy with
OpenBLAS): 1e8 to 3e8 such operations per second on Open Model Zoo CNNs (a person-detection-sized
detector, 1.4e9 operations: 5 s; single-image-super-resolution-1032, 5.9e9: 52 s), once the
per-element activations run on whole arrays; ~1e9 on BERT-style MatMuls. The default budget,
:data:`DEFAULT_BUDGET` = 2e10, so stands for 1-3 minutes of oracle time. Small models take a
fixed ~0.1-0.5 s the estimate does not count (the detection heads' Python loops).
"""
from __future__ import annotations

import math

import numpy as np

from ..ir.graph import Graph, Layer
from ..ir.names import input_name, parameters

DEFAULT_BUDGET = 2e10
CONTRACTIONS = ("MatMul", "Convolution", "GroupConvolution", "ConvolutionBackpropData",
                "GroupConvolutionBackpropData", "ScaledDotProductAttention", "Einsum")


def _elements(shape) -> int:
    if shape is None:
        return 1
    return math.prod(1 if d is None else int(d) for d in shape)


def _dim(shape, i: int) -> int:
    if shape is None or not -len(shape) <= i < len(shape) or shape[i] is None:
        return 1
    return int(shape[i])


def layer_cost(layer: Layer) -> int:
    """Multiply-adds of a contracting layer, else its output elements (dynamic dims as 1)."""
    out = sum(_elements(p.shape) for p in layer.outputs) or 1
    ins = [p.shape for p in layer.inputs]
    t = layer.type
    if t == "MatMul" and len(ins) == 2:
        a = ins[0]
        k = _dim(a, -2) if layer.attrs.get("transpose_a") and a is not None and len(a) > 1 else _dim(a, -1)
        return out * k
    if t in ("Convolution", "GroupConvolution") and len(ins) == 2 and ins[1] is not None:
        w = ins[1]  # [C_OUT, C_IN, k...] or [G, C_OUT/G, C_IN/G, k...]: C_IN/G * k... per output
        skip = 2 if t == "Convolution" else 3
        return out * _dim(w, skip - 1) * _elements(w[skip:])
    if t in ("ConvolutionBackpropData", "GroupConvolutionBackpropData") and len(ins) >= 2:
        return _elements(ins[0]) * _elements(ins[1]) // max(_dim(ins[0], 1), 1)
    if t == "ScaledDotProductAttention" and len(ins) >= 3:
        q, k = ins[0], ins[1]
        return out * _dim(k, -2) + _elements(q) * _dim(k, -2)
    if t == "Einsum":  # summed by index loops: the product of the inputs' sizes bounds it
        return math.prod(_elements(s) for s in ins) or 1
    return out


def _dynamic(layer: Layer) -> bool:
    return any(p.shape is None or None in p.shape for p in (*layer.inputs, *layer.outputs))


def graph_cost(graph: Graph) -> tuple[int, int]:
    """:func:`layer_cost` summed over ``graph``, bodies included (once each): (layers whose
    ports are all static, layers with a dynamic dim)."""
    static = dynamic = 0
    for layer in graph.order:
        if _dynamic(layer):
            dynamic += layer_cost(layer)
        else:
            static += layer_cost(layer)
        for body in layer.bodies.values():
            s, d = graph_cost(body.graph)
            static, dynamic = static + s, dynamic + d
    return static, dynamic


def estimate(graph: Graph, feeds: dict[str, np.ndarray]) -> float:
    """The oracle's work on ``feeds``: :func:`graph_cost`, its dynamic part scaled by how many
    times more elements an input holds than with its dynamic dims at 1 (the largest ratio)."""
    scale = 1.0
    for p in parameters(graph):
        value = feeds.get(input_name(p))
        declared = p.attrs.get("shape")
        if value is None:
            continue
        at_one = _elements(declared) if declared is not None else 1
        scale = max(scale, np.asarray(value).size / max(at_one, 1))
    static, dynamic = graph_cost(graph)
    return static + dynamic * scale


def over_budget(graph: Graph, feeds: dict[str, np.ndarray], budget: float | None) -> tuple[float, str]:
    """(estimate, reason to skip the oracle or ``""``) for ``budget`` (None: no limit)."""
    cost = estimate(graph, feeds)
    if budget is None or cost <= budget:
        return cost, ""
    return cost, (f"the model needs ~{cost:.2g} multiply-adds and elements, over the oracle budget "
                  f"of {budget:.2g} (--oracle-budget N raises it; --no-oracle skips the oracle "
                  f"without estimating)")
