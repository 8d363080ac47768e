"""CTCGreedyDecoder-1 and CTCGreedyDecoderSeqLen-6: best-path decoding of CTC recognizers.

Facts (OpenVINO's operation specification and reference): at every time step the class is the
arg-max over the classes, the first one among equal maxima (ONNX ArgMax, select_last_index=0).
A step's class is emitted unless it is the blank or, with merge_repeated, equal to the previous
step's class; the previous class is updated at every step, blanks included, so ``a - a`` gives
``a a`` while ``a a`` gives ``a``. Emitted classes are packed from the start of the row and the
rest of the row is -1.

- CTCGreedyDecoder-1: data ``[T, N, C]``, sequence_mask ``[T, N]``; the blank is ``C - 1``; a
  sequence ends at its first step whose mask is 0 (later non-zero mask values are ignored). The
  output ``[N, T, 1, 1]`` has the data's float type.
- CTCGreedyDecoderSeqLen-6: data ``[N, T, C]``, sequence_length ``[N]``, blank_index (optional,
  default ``C - 1``, a constant or a run-time scalar/``[1]``); outputs the classes ``[N, T]``
  (classes_index_type) and the decoded lengths ``[N]`` (sequence_length_type). A
  sequence_length above T is an error for OpenVINO; here such a row is decoded over its T steps.

ONNX chain: ArgMax (f16 through f32, exact), the step mask (Range < length, or CumSum of the
zero-mask steps == 0), the previous class (Pad with -1, Slice), the keep mask (And / Not /
Equal), then the packing: TopK(k=T, smallest) of ``t + T * (1 - keep)`` lists the kept steps in
order first, GatherElements picks their classes and Where puts -1 past the kept count
(ReduceSum). Every step is integer arithmetic or selection: the output is exact.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import known_rank
from ._common.shapes import dims_of, i64

FLOATS = ("f16", "f32", "f64")


def _classes(b, layer, data, class_axis):
    if data.etype is None or data.etype.name not in FLOATS:
        raise UnsupportedLayer(layer, f"{layer.type} on {data.etype.name if data.etype else '?'} data "
                                      "is not supported (f16, f32, f64)")
    if known_rank(layer, data, 3) != 3:
        raise InvalidLayer(layer, "data must be 3-D")
    x = b.Cast(data, to=1) if data.etype.name == "f16" else data
    return b.ArgMax(x, axis=class_axis, keepdims=0, select_last_index=0)


def _decode(b, cls, steps, valid, blank, merge):
    """cls [N, T] int64, valid [N, T] bool, blank int64 [1] -> (classes [N, T], counts [N])."""
    padded = b.Pad(cls, i64(b, [0, 1, 0, 0]), i64(b, -1))  # -1 before the first step
    prev = b.Slice(padded, i64(b, [0]), i64(b, [-1]), i64(b, [1]))
    keep = b.And(valid, b.Not(b.Equal(cls, blank)))
    if merge:
        keep = b.And(keep, b.Not(b.Equal(cls, prev)))
    t = b.Range(i64(b, 0), steps, i64(b, 1))
    key = b.Add(t, b.Mul(steps, b.Sub(i64(b, 1), b.Cast(keep, to=7))))
    _, order = b.TopK(key, b.Reshape(steps, i64(b, [1])), axis=1, largest=0, sorted=1, _outputs=2)
    packed = b.GatherElements(cls, order, axis=1)
    count = b.ReduceSum(b.Cast(keep, to=7), i64(b, [1]), keepdims=0)
    filled = b.Less(t, b.Unsqueeze(count, i64(b, [1])))
    return b.Where(filled, packed, i64(b, -1)), count


def _steps(b, data, axis):
    """T (int64 scalar) from the data's shape."""
    if data.shape[axis] is not None:
        return i64(b, data.shape[axis])
    return b.Squeeze(dims_of(b, data, axis, axis + 1), i64(b, [0]))


@lowers("CTCGreedyDecoder", "opset1")
def ctc_greedy_decoder(ctx, layer, inputs):
    """CTCGreedyDecoder-1 (data [T, N, C], sequence_mask [T, N]) -> ArgMax, Transpose, CumSum,
    Equal, Not, And, Pad, Slice, TopK, GatherElements, ReduceSum, Where, Cast, Unsqueeze."""
    data, mask = inputs
    b = ctx.b
    cls = b.Transpose(_classes(b, layer, data, 2), perm=[1, 0])  # [N, T]
    if data.shape[2] is None:
        raise UnsupportedLayer(layer, "CTCGreedyDecoder needs a static class dim (the blank is C - 1)")
    m = b.Transpose(mask, perm=[1, 0])
    zero = b.Equal(b.Cast(m, to=11), b.const(0.0, np.float64))  # through f64: no non-zero becomes 0
    ended = b.CumSum(b.Cast(zero, to=7), i64(b, 1))
    valid = b.Equal(ended, i64(b, 0))
    blank = i64(b, [data.shape[2] - 1])
    decoded, _ = _decode(b, cls, _steps(b, data, 0), valid, blank, bool(layer.attrs["ctc_merge_repeated"]))
    out = b.Cast(decoded, to=data.etype.onnx)
    return [b.Unsqueeze(out, i64(b, [2, 3]))]


@lowers("CTCGreedyDecoderSeqLen", "opset6")
def ctc_greedy_decoder_seq_len(ctx, layer, inputs):
    """CTCGreedyDecoderSeqLen-6 (data [N, T, C], sequence_length [N], blank_index?) -> ArgMax,
    Range, Less, Equal, Not, And, Pad, Slice, TopK, GatherElements, ReduceSum, Where, Cast."""
    data, seq_len = inputs[0], inputs[1]
    b = ctx.b
    cls = _classes(b, layer, data, 2)  # [N, T]
    types = {}
    for attr in ("classes_index_type", "sequence_length_type"):
        name = getattr(layer.attrs[attr], "name", layer.attrs[attr])
        if name not in ("i32", "i64"):
            raise InvalidLayer(layer, f"{attr} must be i32 or i64, got {name}")
        types[attr] = 6 if name == "i32" else 7
    steps = _steps(b, data, 1)
    if len(inputs) > 2:
        blank_v = inputs[2]
        if blank_v.is_const:
            blank = i64(b, np.asarray(blank_v.value()).astype(np.int64).reshape(1))
        else:
            blank = b.Reshape(b.Cast(blank_v, to=7), i64(b, [1]))
    elif data.shape[2] is not None:
        blank = i64(b, [data.shape[2] - 1])
    else:
        blank = b.Sub(dims_of(b, data, 2, 3), i64(b, [1]))
    lengths = b.Cast(seq_len, to=7)
    t = b.Range(i64(b, 0), steps, i64(b, 1))
    valid = b.Less(t, b.Unsqueeze(lengths, i64(b, [1])))
    decoded, count = _decode(b, cls, steps, valid, blank, bool(layer.attrs["merge_repeated"]))
    return [b.Cast(decoded, to=types["classes_index_type"]), b.Cast(count, to=types["sequence_length_type"])]
