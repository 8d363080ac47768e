"""Oracles of the embedding bags, EmbeddingBagOffsetsSum-3, EmbeddingBagOffsets-15,
EmbeddingBagPackedSum-3, EmbeddingBagPacked-15 and EmbeddingSegmentsSum-3, from the specs, bag by
bag and index by index: a bag's sum starts from zero and adds ``emb_table[i] * weight`` for each of
its indices (floats in float64, rounded once to the element type; integers wrap in the element
type); ``mean`` divides by the bag size; an empty bag is ``emb_table[default_index]`` when a
default index is given (and is not -1 for the Offsets ops), else zeros."""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .elements import index_in
from .registry import oracle


def _bag(layer, table, members, weights, reduction, default, minus_one_is_zero=True):
    """One bag: ``members`` are positions into ``indices`` already resolved to table rows."""
    is_float = table.dtype.kind == "f"
    if not members:
        if default is not None and not (minus_one_is_zero and default == -1):
            if default < 0:
                raise InvalidLayer(layer, f"default_index {default} is negative")
            return table[index_in(layer, default, table.shape[0])].copy()
        return np.zeros(table.shape[1:], table.dtype)
    if reduction == "mean" and not is_float:
        raise InvalidLayer(layer, "reduction 'mean' on integers is not defined by the spec")
    acc = np.zeros(table.shape[1:], np.float64 if is_float else table.dtype)
    with np.errstate(over="ignore"):
        for row, weight in members:
            value = table[index_in(layer, row, table.shape[0])]
            if is_float:
                acc = acc + value.astype(np.float64) * (1.0 if weight is None else float(weight))
            else:
                acc = (acc + (value if weight is None else value * weight)).astype(table.dtype)
    if reduction == "mean":
        acc = acc / len(members)
    return acc.astype(table.dtype)


def _weights(layer, inputs, at, n, reduction):
    if len(inputs) <= at:
        return [None] * n
    if reduction == "mean":
        raise InvalidLayer(layer, "per_sample_weights are supported only with reduction 'sum'")
    w = inputs[at].reshape(-1)
    if w.size != n:
        raise InvalidLayer(layer, f"per_sample_weights hold {w.size} values for {n} indices")
    return list(w)


def _offsets(layer, inputs, reduction):
    table, idx, offsets = inputs[:3]
    n, batch = idx.shape[0], offsets.shape[0]
    default = int(np.asarray(inputs[3]).reshape(-1)[0]) if len(inputs) > 3 else None
    weights = _weights(layer, inputs, 4, n, reduction)
    bags = []
    for k in range(batch):
        start, end = int(offsets[k]), int(offsets[k + 1]) if k + 1 < batch else n
        if not 0 <= start <= end <= n:
            raise InvalidLayer(layer, f"offsets {offsets.tolist()} are not ascending within [0, {n}]")
        members = [(idx[j], weights[j]) for j in range(start, end)]
        bags.append(_bag(layer, table, members, weights, reduction, default))
    return [np.stack(bags).reshape((batch,) + table.shape[1:])]


@oracle("EmbeddingBagOffsetsSum", "opset3")
def embedding_bag_offsets_sum3(layer, inputs):
    return _offsets(layer, inputs, "sum")


@oracle("EmbeddingBagOffsets", "opset15")
def embedding_bag_offsets15(layer, inputs):
    return _offsets(layer, inputs, layer.attrs["reduction"])


def _packed(layer, inputs, reduction):
    table, idx = inputs[:2]
    if idx.ndim != 2:
        raise InvalidLayer(layer, f"indices must be 2-D, got shape {idx.shape}")
    weights = _weights(layer, inputs, 2, idx.size, reduction)
    per_bag = idx.shape[1]
    bags = [_bag(layer, table, [(idx[b, j], weights[b * per_bag + j]) for j in range(per_bag)], weights,
                 reduction, None) for b in range(idx.shape[0])]
    return [np.stack(bags).reshape(idx.shape[:1] + table.shape[1:])]


@oracle("EmbeddingBagPackedSum", "opset3")
def embedding_bag_packed_sum3(layer, inputs):
    return _packed(layer, inputs, "sum")


@oracle("EmbeddingBagPacked", "opset15")
def embedding_bag_packed15(layer, inputs):
    return _packed(layer, inputs, layer.attrs["reduction"])


@oracle("EmbeddingSegmentsSum", "opset3")
def embedding_segments_sum3(layer, inputs):
    table, idx, seg, num = inputs[:4]
    num = int(np.asarray(num).reshape(-1)[0])
    default = int(np.asarray(inputs[4]).reshape(-1)[0]) if len(inputs) > 4 else None
    weights = _weights(layer, inputs, 5, idx.shape[0], "sum")
    members = [[] for _ in range(num)]
    for j, s in enumerate(seg):
        if not 0 <= int(s) < num:
            raise InvalidLayer(layer, f"segment id {int(s)} is outside [0, {num})")
        members[int(s)].append((idx[j], weights[j]))
    bags = [_bag(layer, table, m, weights, "sum", default, minus_one_is_zero=False) for m in members]
    return [np.stack(bags).reshape((num,) + table.shape[1:])]
