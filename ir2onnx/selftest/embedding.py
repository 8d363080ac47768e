"""Selftest cases of the embedding bags (EmbeddingBagOffsetsSum-3, EmbeddingBagOffsets-15,
EmbeddingBagPackedSum-3, EmbeddingBagPacked-15, EmbeddingSegmentsSum-3): the specs' worked
examples, on a run-time table."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param

TABLE = np.array([[-0.2, -0.6], [-0.1, -0.4], [-1.9, -1.8], [-1., 1.5], [0.8, -0.7]], np.float32)
_FEEDS = {"x": TABLE}
_SOURCE = "{} spec example: emb_table [[-0.2, -0.6], [-0.1, -0.4], [-1.9, -1.8], [-1, 1.5], [0.8, -0.7]]"


def _offsets(version, default, weights, reduction="sum"):
    def make(ops):
        import openvino.opset3 as o3

        x = param(ops, [5, 2])
        args = [x, const(ops, [0, 2, 3, 4]), const(ops, [0, 2, 2])]
        if default is not None:
            args.append(const(ops, default))
            if weights is not None:
                args.append(const(ops, weights, np.float32))
        if version == 3:
            node = o3.embedding_bag_offsets_sum(*args)
        else:
            node = ops.embedding_bag_offsets(*args, reduction=reduction)
        return [(node, "y")], [x]
    return make


def _packed(version, weights, reduction="sum"):
    def make(ops):
        import openvino.opset3 as o3

        x = param(ops, [5, 2])
        args = [x, const(ops, [[0, 2], [1, 2], [3, 4]])] + ([const(ops, weights, np.float32)] if weights else [])
        node = o3.embedding_bag_packed_sum(*args) if version == 3 else ops.embedding_bag_packed(*args, reduction=reduction)
        return [(node, "y")], [x]
    return make


def _segments(ops):
    import openvino.opset3 as o3

    x = param(ops, [5, 2])
    node = o3.embedding_segments_sum(x, const(ops, [0, 2, 3, 4]), const(ops, [0, 0, 2, 2]), const(ops, 3),
                                     const(ops, 0), const(ops, [0.5] * 4, np.float32))
    return [(node, "y")], [x]


def _case(name, op, build, want, source):
    return Case(f"embedding/{name}", op, ov_build(build), inputs=_FEEDS, exact=False,
                expect={"y": np.array(want, np.float32)}, source=_SOURCE.format(source), min_opset=16)


CASES = [
    _case("offsets-sum3-default-0-weights", ("EmbeddingBagOffsetsSum", "opset3"), _offsets(3, 0, [0.5] * 4),
          [[-1.05, -1.2], [-0.2, -0.6], [-0.1, 0.4]], "EmbeddingBagOffsetsSum-3"),
    _case("offsets15-default-0-weights", ("EmbeddingBagOffsets", "opset15"), _offsets(15, 0, [0.5] * 4),
          [[-1.05, -1.2], [-0.2, -0.6], [-0.1, 0.4]], "EmbeddingBagOffsets-15 example 1"),
    _case("offsets15-default-minus-1", ("EmbeddingBagOffsets", "opset15"), _offsets(15, -1, [0.5, 0.2, -2, 1]),
          [[-0.48, -0.66], [0, 0], [2.8, -3.7]], "EmbeddingBagOffsets-15 example 2"),
    _case("offsets15-mean", ("EmbeddingBagOffsets", "opset15"), _offsets(15, None, None, "mean"),
          [[-1.05, -1.2], [0, 0], [-0.1, 0.4]], "EmbeddingBagOffsets-15 example 3"),
    _case("packed-sum3", ("EmbeddingBagPackedSum", "opset3"), _packed(3, None),
          [[-2.1, -2.4], [-2, -2.2], [-0.2, 0.8]], "EmbeddingBagPackedSum-3"),
    _case("packed15-weights", ("EmbeddingBagPacked", "opset15"), _packed(15, [[0.5, 0.5]] * 3),
          [[-1.05, -1.2], [-1, -1.1], [-0.1, 0.4]], "EmbeddingBagPacked-15"),
    _case("packed15-mean", ("EmbeddingBagPacked", "opset15"), _packed(15, None, "mean"),
          [[-1.05, -1.2], [-1, -1.1], [-0.1, 0.4]], "EmbeddingBagPacked-15 (mean)"),
    _case("segments-sum3", ("EmbeddingSegmentsSum", "opset3"), _segments,
          [[-1.05, -1.2], [-0.2, -0.6], [-0.1, 0.4]], "EmbeddingSegmentsSum-3"),
]
