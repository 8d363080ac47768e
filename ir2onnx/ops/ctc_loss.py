"""CTCLoss-4: the connectionist temporal classification loss of each batch row.

Facts (OpenVINO's operation specification and reference): logits ``[N, T, C]`` are unnormalised
(the op takes their log-softmax over C); row n uses its first logit_length[n] steps and its first
label_length[n] labels of ``labels [N, T]``; blank_index (optional, default C - 1) is a scalar.
The target is first reduced: ``unique`` keeps each label's first occurrence (in order; it takes
precedence), else ``preprocess_collapse_repeated`` drops a label equal to its predecessor. The
loss is -log of the summed probability of every path of logit_length steps that decodes to the
target, where decoding drops blanks after, with ``ctc_merge_repeated``, merging runs of equal
classes (without it each target label is exactly one step, so ``a a`` needs no blank between).

Lowering: LogSoftmax (f32; f16 data through f32, the loss cast back), the target reduced and
packed on the graph (pairwise Equal / predecessor Equal, TopK of ``t + T * dropped`` to pack the
kept labels), the extended sequence blank, l1, blank, l2, ... (S = 2T + 1 states) and the
forward recursion over time in an ONNX Loop: alpha'(s) = logsumexp(alpha(s) if s may stay,
alpha(s - 1), alpha(s - 2) if a label may follow the previous label directly) + log p_t(ext(s)),
frozen past the row's logit_length; the loss is -logsumexp(alpha(2D), alpha(2D - 1)). A label
state stays only with ctc_merge_repeated; a label follows the previous label directly unless,
with ctc_merge_repeated, the two are equal. Arithmetic in f32 (the order of the sums differs
from OpenVINO's path enumeration): within rtol 1e-5 for f32.

A label_length 0 row gives -log of the all-blank path (torch's value; OpenVINO's CPU plugin
crashes on it). A target label equal to blank_index is outside the op's definition (no path
decodes to it); OpenVINO returns a finite value there, this chain another one: not claimed.
"""
from __future__ import annotations

import numpy as np
from onnx import helper

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.shapes import dims_of, i64

_FLOAT, _INT64, _BOOL = 1, 7, 9


def _reduce_target(g, labels, label_len, steps, unique: bool, collapse: bool):
    """labels [N, T] int64 -> (packed target [N, T], its length [N])."""
    t = g.Range(i64(g, 0), steps, i64(g, 1))  # [T]
    valid = g.Less(t, g.Unsqueeze(label_len, i64(g, [1])))  # [N, T]
    if unique:
        same = g.Equal(g.Unsqueeze(labels, i64(g, [2])), g.Unsqueeze(labels, i64(g, [1])))  # [N, t, u]
        before = g.Less(g.Unsqueeze(t, i64(g, [0])), g.Unsqueeze(t, i64(g, [1])))  # [t, u]: u < t
        seen = g.ReduceSum(g.Cast(g.And(same, before), to=_INT64), i64(g, [2]), keepdims=0)
        keep = g.And(valid, g.Equal(seen, i64(g, 0)))
    elif collapse:
        prev = g.Slice(g.Pad(labels, i64(g, [0, 1, 0, 0]), i64(g, -1)), i64(g, [0]), i64(g, [-1]), i64(g, [1]))
        first = g.Equal(t, i64(g, 0))
        keep = g.And(valid, g.Or(first, g.Not(g.Equal(labels, prev))))
    else:
        return labels, label_len
    key = g.Add(t, g.Mul(steps, g.Sub(i64(g, 1), g.Cast(keep, to=_INT64))))
    _, order = g.TopK(key, g.Reshape(steps, i64(g, [1])), axis=1, largest=0, sorted=1, _outputs=2)
    return g.GatherElements(labels, order, axis=1), g.ReduceSum(g.Cast(keep, to=_INT64), i64(g, [1]), keepdims=0)


def _logsumexp(g, *terms):
    top = terms[0]
    for v in terms[1:]:
        top = g.Max(top, v)
    ninf = g.const(np.float32(-np.inf), np.float32, "ninf")
    safe = g.Where(g.Equal(top, ninf), g.const(np.float32(0), np.float32, "zero"), top)
    total = g.Exp(g.Sub(terms[0], safe))
    for v in terms[1:]:
        total = g.Add(total, g.Exp(g.Sub(v, safe)))
    return g.Add(g.Log(total), safe)


def _shift(g, alpha, k: int, rows):
    """alpha [N, S] moved right by k states, -inf filling the first k."""
    fill = g.Expand(g.const(np.full((1, k), -np.inf, np.float32), np.float32, "ninf_cols"),
                    g.Concat(rows, i64(g, [k]), axis=0))
    return g.Concat(fill, g.Slice(alpha, i64(g, [0]), i64(g, [-k]), i64(g, [1])), axis=1)


@lowers("CTCLoss", "opset4")
def ctc_loss4(ctx, layer, inputs):
    """CTCLoss-4 (logits, logit_length, labels, label_length[, blank_index]) -> LogSoftmax,
    Equal/TopK/GatherElements (target reduction), Concat/GatherElements (extended sequence),
    Loop (forward recursion: Max, Exp, Log, Where), GatherElements, Neg."""
    logits, logit_len, labels, label_len = inputs[:4]
    if logits.etype is None or logits.etype.name not in ("f16", "f32"):
        raise UnsupportedLayer(layer, f"logits of type {logits.etype.name if logits.etype else '?'} are not "
                                      "supported (f16, f32)")
    if logits.rank not in (None, 3):
        raise InvalidLayer(layer, f"logits must be 3-D [N, T, C], got rank {logits.rank}")
    merge = bool(layer.attrs.get("ctc_merge_repeated", True))
    unique = bool(layer.attrs.get("unique", False))
    collapse = bool(layer.attrs.get("preprocess_collapse_repeated", False))
    g = ctx.b
    x = g.Cast(logits, to=_FLOAT) if logits.etype.name == "f16" else logits.name
    lp = g.LogSoftmax(x, axis=2)  # [N, T, C]
    dims = dims_of(g, logits, 0, 3)
    rows, steps_1 = g.Slice(dims, i64(g, [0]), i64(g, [1])), g.Slice(dims, i64(g, [1]), i64(g, [2]))
    steps = g.Squeeze(steps_1, i64(g, [0]))
    if len(inputs) > 4:
        blank = g.Reshape(g.Cast(inputs[4], to=_INT64), i64(g, [1, 1]))
    else:
        blank = g.Reshape(g.Sub(g.Slice(dims, i64(g, [2]), i64(g, [3])), i64(g, [1])), i64(g, [1, 1]))
    target, count = _reduce_target(g, g.Cast(labels, to=_INT64), g.Cast(label_len, to=_INT64), steps, unique, collapse)
    t = g.Range(i64(g, 0), steps, i64(g, 1))
    target = g.Where(g.Less(t, g.Unsqueeze(count, i64(g, [1]))), target, blank)  # junk past the target: blank
    blanks = g.Expand(blank, g.Concat(rows, steps_1, axis=0))  # [N, T]
    pairs = g.Concat(g.Unsqueeze(blanks, i64(g, [2])), g.Unsqueeze(target, i64(g, [2])), axis=2)
    ext = g.Concat(g.Reshape(pairs, g.Concat(rows, i64(g, [-1]), axis=0)), g.Expand(blank, g.Concat(rows, i64(g, [1]), axis=0)), axis=1)  # [N, S]
    size = g.Add(g.Mul(steps_1, i64(g, [2])), i64(g, [1]))  # [1]
    emit_idx = g.Expand(g.Unsqueeze(ext, i64(g, [1])), g.Concat(rows, steps_1, size, axis=0))
    emit = g.Transpose(g.GatherElements(lp, emit_idx, axis=2), perm=[1, 0, 2])  # [T, N, S]
    s = g.Range(i64(g, 0), g.Squeeze(size, i64(g, [0])), i64(g, 1))  # [S]
    odd = g.Equal(g.Mod(s, i64(g, 2)), i64(g, 1))
    ext_prev2 = g.Concat(g.Expand(i64(g, [[-1, -1]]), g.Concat(rows, i64(g, [2]), axis=0)),
                         g.Slice(ext, i64(g, [0]), i64(g, [-2]), i64(g, [1])), axis=1)
    skip = g.And(odd, g.Not(g.Equal(ext, ext_prev2))) if merge else g.And(odd, g.Greater(s, i64(g, 1)))
    stay = None if merge else g.Not(odd)
    ninf = g.const(np.float32(-np.inf), np.float32, "ninf")
    start = g.Where(g.Equal(s, i64(g, 0)), g.const(np.float32(0), np.float32, "zero"), ninf)
    alpha0 = g.Expand(g.Unsqueeze(start, i64(g, [0])), g.Concat(rows, size, axis=0))  # [N, S]
    limit = g.Unsqueeze(g.Cast(logit_len, to=_INT64), i64(g, [1]))  # [N, 1]

    saved, g.nodes = g.nodes, []
    it, cond_in, alpha = g.unique("ctc/iter"), g.unique("ctc/cond"), g.unique("ctc/alpha")
    here = alpha if merge else g.Where(stay, alpha, ninf)
    skipped = g.Where(skip, _shift(g, alpha, 2, rows), ninf)
    new = g.Add(_logsumexp(g, here, _shift(g, alpha, 1, rows), skipped), g.Gather(emit, it, axis=0))
    out = g.Where(g.Less(it, limit), new, alpha)
    cond_out = g.Identity(cond_in)
    body_nodes, g.nodes = g.nodes, saved
    body = helper.make_graph(body_nodes, g.unique("ctc/body"),
                             [helper.make_tensor_value_info(it, _INT64, []),
                              helper.make_tensor_value_info(cond_in, _BOOL, []),
                              helper.make_tensor_value_info(alpha, _FLOAT, [None, None])],
                             [helper.make_tensor_value_info(cond_out, _BOOL, []),
                              helper.make_tensor_value_info(out, _FLOAT, [None, None])])
    final = g.Loop(g.Reshape(steps, i64(g, [])), "", alpha0, body=body)
    last = g.Unsqueeze(g.Mul(count, i64(g, 2)), i64(g, [1]))  # [N, 1]
    ends = g.GatherElements(final, g.Concat(last, g.Max(g.Sub(last, i64(g, 1)), i64(g, 0)), axis=1), axis=1)
    end_a, end_b = g.Split(ends, i64(g, [1, 1]), axis=1, _outputs=2)
    end_b = g.Where(g.Greater(last, i64(g, 0)), end_b, ninf)
    loss = g.Neg(g.Squeeze(_logsumexp(g, end_a, end_b), i64(g, [1])))
    return [g.Cast(loss, to=logits.etype.onnx) if logits.etype.name == "f16" else loss]
