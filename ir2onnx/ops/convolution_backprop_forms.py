"""The two ONNX forms of a transposed convolution (helpers of convolution_backprop_data.py).

ConvTranspose: explicit symmetric pads (never auto_pad / output_shape, never negative), then a Pad
for zeros past the natural output and a Slice for the asymmetric rest; with a run-time
output_shape the full result is padded and sliced by amounts computed in the graph.

Stride phases: with stride s and dilation 1 on an axis, output position ``o = q*s + r`` only
receives the taps ``k = r + m*s``: ``F[q*s + r] = sum_m x[q - m] * w[r + m*s]``, an ordinary
convolution of x with the flipped sub-kernel ``w[r::s]`` (M = ceil(K/s) taps, zero-filled). One Conv with
``C_OUT * prod(s)`` output channels (channel ``c*S + phase``, DepthToSpace's CRD order) computes
every phase; DepthToSpace (2-D, equal strides) or Reshape -> Transpose -> Reshape interleaves them
and a Slice crops. Shifting the Conv's pads by whole blocks absorbs most of the begin crop, and a
larger end pad yields the zeros past the natural output (which then get the bias, as they should).

Exactness: with K % s == 0 and finite weights the Conv adds only exact zeros to the terms
ConvTranspose adds, so results differ by summation order only; zero-filled taps (K % s != 0)
would turn an infinite input into NaN, so the automatic choice never uses them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..lowering.builder import Value
from ..lowering.shapes import INT64_MAX, as_int64, dims_of, i64

FOLD_ELEMENTS = 4096  # constant filters up to this size are rearranged at convert time
INT64_MIN = np.iinfo(np.int64).min


@dataclass(frozen=True)
class Plan:
    taps: tuple[int, ...]  # M per axis
    pads_begin: tuple[int, ...]  # of the Conv
    pads_end: tuple[int, ...]
    conv_out: tuple[int, ...]  # the Conv's spatial output size
    starts: tuple[int, ...]  # Slice after interleaving
    sizes: tuple[int, ...]  # final spatial size
    phases: int  # prod(strides)


def choose(geo, crops) -> bool:
    """The per-shape choice, measured on 2 threads (benchmarks/bench_convolution_backprop_data.py
    and the notes in its docstring): stride phases win when every kernel splits into whole
    phases (K % s == 0: kernel 4 stride 2, kernel 6 stride 3, any stride-1 kernel) for 1-D, 2-D
    and 3-D alike; ConvTranspose wins when K == s on every axis (no overlap: one GEMM and a
    trivial col2im) and is the only exact form when K % s != 0 (zero-filled taps)."""
    return (all(c >= 0 for c in crops) and any(k > s for k, s in zip(geo.kernel, geo.strides))
            and all(k % s == 0 for k, s in zip(geo.kernel, geo.strides)))


def plan(geo, begins, crops, mode: str | None, weights_finite: Callable[[], bool]) -> Plan | None:
    """A Plan when the phase form is chosen (``mode`` None: by :func:`choose`, and only for
    filters known to be finite) and expressible; ``mode`` "phase" forces it where expressible.
    Dilation is expressible on stride-1 axes only (a dilated Conv there)."""
    if mode == "convtranspose" or any(d is None for d in geo.spatial):
        return None
    if any(d != 1 and s != 1 for d, s in zip(geo.dilations, geo.strides)):
        return None
    if mode != "phase" and not (choose(geo, crops) and weights_finite()):
        return None
    natural = geo.natural()
    taps, pb, pe, out, starts, sizes = [], [], [], [], [], []
    for s, k, d, x, f, b, c in zip(geo.strides, geo.kernel, geo.dilations, geo.spatial, natural, begins, crops):
        m = -(-k // s)
        reach = (m - 1) * d  # the Conv's receptive field minus one (d > 1 only where s == 1)
        head = reach - b // s  # whole blocks of the begin crop come off the Conv's begin pad
        if head < 0:
            return None
        size = f - b - c
        tail = max(-(-(b % s + size) // s) - x - head + reach, 0)
        taps.append(m), pb.append(head), pe.append(tail), starts.append(b % s), sizes.append(size)
        out.append(x + head + tail - reach)
    return Plan(tuple(taps), tuple(pb), tuple(pe), tuple(out), tuple(starts), tuple(sizes),
                math.prod(geo.strides))


def _transform(ctx, w, steps):
    """Apply data-movement steps to the filters: NumPy for small constants, else ONNX nodes
    (onnxruntime folds them at load time when the filters are initializers)."""
    b = ctx.b
    if w.is_const and math.prod(w.shape) <= FOLD_ELEMENTS:
        a = np.asarray(w.value())
        for op, arg in steps:
            if op == "reshape":
                a = a.reshape(arg)
            elif op == "pad":
                a = np.pad(a, [(0, e) for e in arg])
            elif op == "flip":
                a = np.flip(a, arg)
            else:
                a = a.transpose(arg)
        return b.const_value(np.ascontiguousarray(a), "filters")
    name = w
    for op, arg in steps:
        if op == "reshape":
            name = b.Reshape(name, i64(b, list(arg)), allowzero=1)
        elif op == "pad":
            name = b.Pad(name, i64(b, [0] * len(arg) + list(arg)))
        elif op == "flip":
            n = len(arg)
            name = b.Slice(name, i64(b, [-1] * n), i64(b, [INT64_MIN] * n), i64(b, list(arg)), i64(b, [-1] * n))
        else:
            name = b.Transpose(name, perm=list(arg))
    return name


def phase_filters(ctx, geo, p: Plan, w):
    """[G, C_IN/G, C_OUT/G, K...] -> [G*C_OUT/G*S, C_IN/G, M...] with flipped sub-kernels."""
    r, s = geo.rank, geo.strides
    g_shape = tuple(w.shape) if len(w.shape) == r + 3 else (1, *w.shape)
    groups, cin_g, cout_g = g_shape[:3]
    steps = [("reshape", g_shape)]
    extra = [m * st - k for m, st, k in zip(p.taps, s, geo.kernel)]
    if any(extra):
        steps.append(("pad", [0, 0, 0] + extra))
    split = [groups, cin_g, cout_g]
    for m, st in zip(p.taps, s):
        split += [m, st]
    steps.append(("reshape", split))
    steps.append(("flip", tuple(3 + 2 * i for i in range(r))))
    steps.append(("transpose", [0, 2] + [4 + 2 * i for i in range(r)] + [1] + [3 + 2 * i for i in range(r)]))
    steps.append(("reshape", [groups * cout_g * p.phases, cin_g, *p.taps]))
    return _transform(ctx, w, steps)


def _interleave(b, y, c: int, s: list[int], q: list[int]) -> str:
    """[N, C*S, Q...] (channel c*S + phase) -> [N, C, Q0*s0, ...]. 2-D with equal strides:
    DepthToSpace (CRD). 3-D with s1 == s2: depth to the batch (a transpose of whole planes),
    DepthToSpace, depth phases back (whole planes again): measured 1.7x faster than one 8-D
    Transpose in onnxruntime. Otherwise Reshape -> Transpose -> Reshape."""
    r = len(s)
    if r == 2 and s[0] == s[1]:
        return b.DepthToSpace(y, blocksize=s[0], mode="CRD")
    if r == 3 and s[1] == s[2] > 1:
        y = b.Reshape(b.Transpose(y, perm=[0, 2, 1, 3, 4]), i64(b, [-1, c * math.prod(s), q[1], q[2]]))
        y = b.DepthToSpace(y, blocksize=s[1], mode="CRD")
        y = b.Transpose(b.Reshape(y, i64(b, [-1, q[0], c, s[0], q[1] * s[1], q[2] * s[2]])), perm=[0, 2, 1, 3, 4, 5])
        return b.Reshape(y, i64(b, [-1, c, q[0] * s[0], q[1] * s[1], q[2] * s[2]]))
    y = b.Reshape(y, i64(b, [-1, c] + s + q))
    y = b.Transpose(y, perm=[0, 1] + [a for i in range(r) for a in (2 + r + i, 2 + i)])
    return b.Reshape(y, i64(b, [-1, c] + [n * st for n, st in zip(q, s)]))


def emit_phase(ctx, geo, p: Plan, x, w, bias: np.ndarray | None, etype) -> str:
    """Conv -> DepthToSpace (3-D: Transpose, Reshape, DepthToSpace, Reshape, Transpose, Reshape;
    otherwise Reshape, Transpose, Reshape) [-> Slice]."""
    b, r, s = ctx.b, geo.rank, list(geo.strides)
    bname = None if bias is None else b.add_initializer(bias, etype, f"{b.layer_name}/bias")
    inputs = [x, phase_filters(ctx, geo, p, w)] + ([bname] if bname else [])
    y = b.Conv(*inputs, group=geo.groups, kernel_shape=list(p.taps), dilations=list(geo.dilations),
               pads=list(p.pads_begin) + list(p.pads_end), strides=[1] * r)
    if p.phases > 1:
        y = _interleave(b, y, geo.c_out, s, list(p.conv_out))
    full = [q * st for q, st in zip(p.conv_out, s)]
    if any(p.starts) or list(p.sizes) != full:
        ends = [a + n for a, n in zip(p.starts, p.sizes)]
        y = b.Slice(y, i64(b, list(p.starts)), i64(b, ends), i64(b, list(range(2, r + 2))))
    return y


# -- ConvTranspose ---------------------------------------------------------------------------------
def weights_for_convtranspose(ctx, geo, w):
    """[C_IN, C_OUT/GROUPS, K...] as ConvTranspose wants (grouped filters are reshaped)."""
    if geo.groups == 1 and len(w.shape) == geo.rank + 2:
        return w
    shape = [w.shape[0] * w.shape[1], *w.shape[2:]]
    if w.is_const and math.prod(w.shape) <= FOLD_ELEMENTS:
        return ctx.b.const_value(np.asarray(w.value()).reshape(shape), "filters")
    return ctx.b.Reshape(w, i64(ctx.b, shape), allowzero=1)


def _convtranspose(ctx, geo, x, w, bias, pads: list[int]) -> str:
    b = ctx.b
    inputs = [x, weights_for_convtranspose(ctx, geo, w)] + ([bias] if bias else [])
    return b.ConvTranspose(*inputs, strides=list(geo.strides),
                           dilations=list(geo.dilations), group=geo.groups, pads=pads + pads,
                           kernel_shape=list(geo.kernel))


def emit_static(ctx, geo, x, w, bias, begins, crops) -> str:
    """ConvTranspose with the symmetric part of the crops, Pad for zeros past F, Slice for the rest."""
    b, r = ctx.b, geo.rank
    sym = [min(bg, max(c, 0)) for bg, c in zip(begins, crops)]
    y = _convtranspose(ctx, geo, x, w, bias, sym)
    ext = [max(-c, 0) for c in crops]
    if any(ext):
        y = b.Pad(y, i64(b, [0] * (r + 2) + [0, 0] + ext))
    starts = [bg - s for bg, s in zip(begins, sym)]
    ends = [s - c if c - s > 0 else INT64_MAX for c, s in zip(crops, sym)]
    if any(starts) or any(e != INT64_MAX for e in ends):
        y = b.Slice(y, i64(b, starts), i64(b, ends), i64(b, list(range(2, r + 2))))
    return y


def emit_runtime(ctx, geo, x, w, bias, out_shape: Value) -> str:
    """The full ConvTranspose, then Pad/Slice by amounts computed from its shape and output_shape:
    ``total = max(natural + output_padding - O, 0)``, begin ``total // 2`` (same_upper:
    ``total - total // 2``), as the spec text says for every auto_pad (OpenVINO differs for
    explicit/valid: README "Where OpenVINO's runtime differs from the spec")."""
    b, r = ctx.b, geo.rank
    full = _convtranspose(ctx, geo, x, w, bias, [0] * r)
    natural = dims_of(b, Value(b, x.etype, None, name=full), 2)
    sizes = as_int64(b, out_shape)
    zeros = i64(b, [0] * r)
    # the spec text for every auto_pad: total clamped at 0 (exact floor: Div of non-negatives)
    total = b.Max(b.Sub(b.Add(natural, i64(b, list(geo.output_padding))), sizes), zeros)
    half = b.Div(total, i64(b, [2] * r))
    begin = b.Sub(total, half) if geo.auto_pad == "same_upper" else half
    end = b.Add(begin, sizes)
    ext = b.Max(b.Sub(end, natural), zeros)
    padded = b.Pad(full, b.Concat(i64(b, [0] * (r + 4)), ext, axis=0))
    return b.Slice(padded, begin, end, i64(b, list(range(2, r + 2))))
