"""Oracles of MatMul-1 and Einsum-7, from the specs: MatMul by numpy.matmul on float64 (int64)
operands, the spec's sum of products with its rank and transpose rules spelled out; Einsum by
summing products over every assignment of its labels, so it shares nothing with numpy.einsum or
the lowering."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


@oracle("MatMul", "opset1")
def matmul(layer, inputs):
    """out[..., i, j] = sum_k A'[..., i, k] * B'[..., k, j]; 1-D operands become a row (A) or a
    column (B) vector whatever the transpose flags, and that axis is dropped from the result;
    batch dims broadcast numpy-style. Floats accumulate in float64 (numpy.matmul on float64
    operands) and are rounded once; integers in int64 (uint64 for u64), wrapping modulo 2^64, so
    the low bits kept by the cast to the operand type are the sum modulo 2^bits."""
    a, b = inputs
    if a.dtype != b.dtype or a.ndim == 0 or b.ndim == 0:
        raise InvalidLayer(layer, "operands must share a type and have rank >= 1")
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    acc = np.uint64 if a.dtype == np.uint64 else np.int64 if a.dtype.kind in "iub" else np.float64
    x = a.astype(acc)[None, :] if a_vec else a.astype(acc)  # a row vector [1, K]
    y = b.astype(acc)[:, None] if b_vec else b.astype(acc)  # a column vector [K, 1]
    if layer.attrs.get("transpose_a") and not a_vec:
        x = np.swapaxes(x, -1, -2)
    if layer.attrs.get("transpose_b") and not b_vec:
        y = np.swapaxes(y, -1, -2)
    if x.shape[-1] != y.shape[-2]:
        raise InvalidLayer(layer, f"inner dimensions differ ({x.shape[-1]} and {y.shape[-2]})")
    try:
        np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    except ValueError:
        raise InvalidLayer(layer, "batch dimensions do not broadcast") from None
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.matmul(x, y)
    if a_vec:
        out = out.reshape(out.shape[:-2] + out.shape[-1:])
    if b_vec:
        out = out.reshape(out.shape[:-1])
    return [out.astype(a.dtype)]


# -- Einsum-7 --------------------------------------------------------------------------------
def _split_labels(term: str) -> list[str]:
    labels, i = [], 0
    while i < len(term):
        if term.startswith("...", i):
            labels.append("...")
            i += 3
        elif term[i].isalpha():
            labels.append(term[i])
            i += 1
        else:
            raise ValueError(term)
    return labels


@oracle("Einsum", "opset7")
def einsum7(layer, inputs):
    equation = str(layer.attrs["equation"]).replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    try:
        terms = [_split_labels(t) for t in lhs.split(",")]
        out_labels = _split_labels(rhs) if arrow else None
    except ValueError:
        raise InvalidLayer(layer, f"equation '{equation}' has a character that is not a letter or '...'") from None
    if len(terms) != len(inputs):
        raise InvalidLayer(layer, f"equation '{equation}' does not name {len(inputs)} inputs")
    sizes: dict[str, int] = {}
    ell_shape: tuple[int, ...] = ()
    expanded = []  # per input: its axes as label names, the ellipsis spelled ".0", ".1", ...
    ell_rank = max((x.ndim - len(t) + 1 for x, t in zip(inputs, terms) if "..." in t), default=0)
    for x, t in zip(inputs, terms):
        if "..." in t:
            k = x.ndim - len(t) + 1
            if k < 0:
                raise InvalidLayer(layer, f"input of rank {x.ndim} is too small for its subscript")
            pos = t.index("...")
            axes = t[:pos] + [f".{ell_rank - k + j}" for j in range(k)] + t[pos + 1:]
            try:
                ell_shape = np.broadcast_shapes(ell_shape, x.shape[pos:pos + k])
            except ValueError:
                raise InvalidLayer(layer, "the inputs' '...' dimensions do not broadcast") from None
        else:
            axes = t
        if len(axes) != x.ndim:
            raise InvalidLayer(layer, f"subscript '{''.join(t)}' does not fit an input of rank {x.ndim}")
        for lab, d in zip(axes, x.shape):
            if lab.startswith("."):
                continue
            if sizes.setdefault(lab, d) != d:
                raise InvalidLayer(layer, f"label '{lab}' has sizes {sizes[lab]} and {d}")
        expanded.append(axes)
    for j, d in enumerate(ell_shape):
        sizes[f".{j}"] = d
    ell_names = [f".{j}" for j in range(len(ell_shape))]
    if out_labels is None:
        counts = {}
        for t in terms:
            for lab in t:
                counts[lab] = counts.get(lab, 0) + 1
        out_labels = (["..."] if "..." in counts else []) + sorted(l for l, n in counts.items() if n == 1 and l != "...")
    out_axes = []
    for lab in out_labels:
        out_axes += ell_names if lab == "..." else [lab]
    if any(lab not in sizes for lab in out_axes) or len(set(out_axes)) != len(out_axes):
        raise InvalidLayer(layer, f"output subscript of '{equation}' is invalid")
    summed = [lab for lab in sizes if lab not in out_axes]
    out = np.zeros([sizes[l] for l in out_axes], np.float64 if inputs[0].dtype.kind == "f" else np.int64)
    for oi in itertools.product(*(range(sizes[l]) for l in out_axes)):
        total = 0
        for si in itertools.product(*(range(sizes[l]) for l in summed)):
            at = dict(zip(out_axes, oi)) | dict(zip(summed, si))
            prod = 1
            for x, axes in zip(inputs, expanded):
                prod = prod * x[tuple(0 if x.shape[a] == 1 and lab.startswith(".") else at[lab]
                                      for a, lab in enumerate(axes))].astype(out.dtype)
            total = total + prod
        out[oi] = total
    return [out.astype(inputs[0].dtype)]
