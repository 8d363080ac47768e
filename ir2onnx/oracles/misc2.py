"""Oracles of ConvertLike-1, Eye-9 and Einsum-7, from the specs (Einsum by summing products over
every assignment of its labels, so it shares nothing with numpy.einsum or the lowering)."""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InvalidLayer
from .infrastructure import convert_array
from .registry import oracle


@oracle("ConvertLike", "opset1")
def convert_like(layer, inputs):
    data, like = inputs
    return [convert_array(data, like.dtype)]


def _one(layer, x, what: str) -> int:
    flat = np.asarray(x).reshape(-1)
    if flat.size != 1:
        raise InvalidLayer(layer, f"{what} must hold one value, got {flat.size}")
    return int(flat[0])


@oracle("Eye", "opset9")
def eye9(layer, inputs):
    rows, cols = _one(layer, inputs[0], "num_rows"), _one(layer, inputs[1], "num_columns")
    diag = _one(layer, inputs[2], "diagonal_index")
    lead = [int(d) for d in np.asarray(inputs[3]).reshape(-1)] if len(inputs) > 3 else []
    if rows < 0 or cols < 0 or any(d < 0 for d in lead):
        raise InvalidLayer(layer, "num_rows, num_columns and batch_shape must be non-negative")
    out = np.zeros(tuple(lead) + (rows, cols), layer.attrs["output_type"].numpy)
    for b in np.ndindex(*lead):
        for i in range(rows):
            j = i + diag
            if 0 <= j < cols:
                out[b + (i, j)] = 1
    return [out]


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
