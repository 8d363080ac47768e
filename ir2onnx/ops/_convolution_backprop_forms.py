"""The two ONNX forms of a transposed convolution (helpers of convolution_backprop_data.py).

ConvTranspose: explicit symmetric pads (never auto_pad / output_shape, never negative), then a Pad
for zeros past the natural output and a Slice for the asymmetric rest; with a run-time
output_shape the full result is padded and sliced by amounts computed in the graph.

Stride phases: with stride s and dilation 1 on an axis, output position ``o = q*s + r`` only
receives the taps ``k = r + m*s``: ``F[q*s + r] = sum_m x[q - m] * w[r + m*s]``, an ordinary
convolution of x with the flipped sub-kernel ``w[r::s]`` (``ceil((K - r) / s)`` taps). Where every
residue r has as many taps (K % s == 0, or s == 1) one Conv computes all of an axis' phases as
output channels; on the other axes each residue gets its own Conv (one per combination of
residues of those axes), so no tap is ever zero-filled. The Conv outputs (channel ``c*S + phase``
within each Conv, S the phases it computes) are then interleaved and cropped either by one
GatherElements (static batch, output up to MAX_GATHER_ELEMENTS: the index is a broadcast sum of
small per-axis tables that onnxruntime folds when the session is created) or, for a single Conv,
by DepthToSpace / Reshape -> Transpose -> Reshape and a Slice. The Convs' pads put the first
needed block at output 0 and make the zeros past the natural output (which then get the bias,
as they should).

Exactness: with finite filters the Convs add only exact zeros (padding) to the terms that
ConvTranspose adds, so results differ by summation order only; the data movement after them is
bit-exact. Non-finite or run-time filters keep ConvTranspose (``inf * 0`` at the padding).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..lowering.builder import Value
from ._common.shapes import INT64_MAX, as_int64, dims_of, folded_sum, i64

FOLD_ELEMENTS = 4096  # constant filters up to this size are rearranged at convert time
INT64_MIN = np.iinfo(np.int64).min
# Output elements up to which the phases are interleaved by one GatherElements (its int32 index,
# as large as the output, is folded when the session is created). Measured on 2 threads against
# DepthToSpace + Slice for 2-D outputs of 0.5M to 32M elements: 0.41 vs 0.77 ms up to 52 vs 80 ms
# (onnxruntime's DepthToSpace kernel is single-threaded); the cap bounds the index's memory.
MAX_GATHER_ELEMENTS = 1 << 23


@dataclass(frozen=True)
class Plan:
    taps: tuple[tuple[int, ...], ...]  # per axis: the taps of each residue r (ceil((K - r) / s))
    q0: tuple[int, ...]  # per axis: the block (position // s) that every Conv's output starts at
    pads_end: tuple[int, ...]  # of every Conv (pads_begin depends on the residue's taps)
    conv_out: tuple[int, ...]  # every Conv's spatial output size
    starts: tuple[int, ...]  # of the result within the interleaved Conv outputs
    sizes: tuple[int, ...]  # final spatial size
    gather: bool  # interleave and crop with one GatherElements

    def split_axes(self) -> list[int]:
        """Axes whose residues have different numbers of taps: one Conv per residue."""
        return [a for a, t in enumerate(self.taps) if len(set(t)) > 1]


def choose(geo, crops) -> bool:
    """The per-shape choice, measured on 2 threads (benchmarks/bench_convolution_backprop_data.py):
    stride phases when the kernel overlaps itself on some axis (K > s) and every residue has a tap
    (K >= s) and the layer is 3-D or its kernel splits into whole phases (K % s == 0: kernel 4
    stride 2, any stride-1 kernel); ConvTranspose when K == s on every axis (no overlap: one GEMM
    and a trivial col2im) and for 1-D/2-D kernels such as 3 stride 2, where its GEMM is as fast
    as several small Convs."""
    if not all(c >= 0 for c in crops) or not any(k > s for k, s in zip(geo.kernel, geo.strides)):
        return False
    if any(k < s for k, s in zip(geo.kernel, geo.strides)):
        return False
    return geo.rank == 3 or all(k % s == 0 for k, s in zip(geo.kernel, geo.strides))


def plan(geo, begins, crops, mode: str | None, weights_finite: Callable[[], bool], batch) -> Plan | None:
    """A Plan when the phase form is chosen (``mode`` None: by :func:`choose`, and only for
    filters known to be finite) and expressible; ``mode`` "phase" forces it where expressible.
    Dilation is expressible on stride-1 axes only (a dilated Conv there); residues with different
    tap counts need the GatherElements interleave (a static batch)."""
    if mode == "convtranspose" or any(d is None for d in geo.spatial):
        return None
    if any(d != 1 and s != 1 for d, s in zip(geo.dilations, geo.strides)):
        return None
    taps = tuple(tuple(-(-(k - r) // s) for r in range(s)) for k, s in zip(geo.kernel, geo.strides))
    if any(min(t) < 1 for t in taps):  # a residue without taps: ConvTranspose
        return None
    natural = geo.natural()
    sizes = [f - b - c for f, b, c in zip(natural, begins, crops)]
    gather = (math.prod(geo.strides) > 1 and isinstance(batch, int)
              and batch * geo.c_out * math.prod(sizes) <= MAX_GATHER_ELEMENTS)
    if not gather and any(len(set(t)) > 1 for t in taps):
        return None
    if mode != "phase" and not (choose(geo, crops) and weights_finite()):
        return None
    q0, pe, out, starts = [], [], [], []
    for s, t, d, x, b, size in zip(geo.strides, taps, geo.dilations, geo.spatial, begins, sizes):
        first = min(b // s, (min(t) - 1) * d)  # whole blocks of the begin crop come off the pads
        blocks = (b + size - 1) // s - first + 1  # the Conv outputs that the result needs
        tail = max(blocks - x + first, 0)
        q0.append(first), pe.append(tail), starts.append(b - first * s), out.append(x - first + tail)
    return Plan(taps, tuple(q0), tuple(pe), tuple(out), tuple(starts), tuple(sizes), gather)


def _transform(ctx, w, steps):
    """Apply data-movement steps to the filters: NumPy for small constants, else ONNX nodes
    (onnxruntime folds them at load time when the filters are initializers)."""
    b = ctx.b
    if w.is_const and math.prod(w.shape) <= FOLD_ELEMENTS:
        a = np.asarray(w.value())
        for op, arg in steps:
            if op == "reshape":
                a = a.reshape(arg)
            elif op == "take":  # (axis, first, step, count)
                axis, first, step, count = arg
                a = np.take(a, range(first, first + step * count, step), axis=axis)
            elif op == "flip":
                a = np.flip(a, arg)
            else:
                a = a.transpose(arg)
        return b.const_value(np.asarray(a, order="C"), "filters")
    name = w
    for op, arg in steps:
        if op == "reshape":
            name = b.Reshape(name, i64(b, list(arg)), allowzero=1)
        elif op == "take":
            axis, first, step, count = arg
            name = b.Slice(name, i64(b, [first]), i64(b, [first + step * (count - 1) + 1]), i64(b, [axis]),
                           i64(b, [step]))
        elif op == "flip":
            n = len(arg)
            name = b.Slice(name, i64(b, [-1] * n), i64(b, [INT64_MIN] * n), i64(b, list(arg)), i64(b, [-1] * n))
        else:
            name = b.Transpose(name, perm=list(arg))
    return name


def phase_filters(ctx, geo, w, residues: dict[int, int], taps: list[int], phases: list[int]):
    """[G, C_IN/G, C_OUT/G, K...] -> [G*C_OUT/G*S, C_IN/G, M...]: flipped sub-kernels, the taps
    ``residues[a]::s`` on the axes in ``residues``, all ``phases[a]`` residues (as output
    channels, channel-major) on the others."""
    r = geo.rank
    g_shape = tuple(w.shape) if len(w.shape) == r + 3 else (1, *w.shape)
    groups, cin_g, cout_g = g_shape[:3]
    steps = [("reshape", g_shape)]
    for a, res in residues.items():
        steps.append(("take", (3 + a, res, geo.strides[a], taps[a])))
    split = [groups, cin_g, cout_g]
    for m, ph in zip(taps, phases):
        split += [m, ph]
    steps.append(("reshape", split))
    steps.append(("flip", tuple(3 + 2 * i for i in range(r))))
    steps.append(("transpose", [0, 2] + [4 + 2 * i for i in range(r)] + [1] + [3 + 2 * i for i in range(r)]))
    steps.append(("reshape", [groups * cout_g * math.prod(phases), cin_g, *taps]))
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


def gather_index(geo, p: Plan, batch: int) -> list[np.ndarray]:
    """The per-axis int32 tables whose broadcast sum is the flat position, in the concatenated
    Conv outputs ``[N, convs * C_OUT * S, conv_out...]``, of each output element: batch, channel,
    then one table per spatial axis (block q -> Conv output q - q0, residue -> Conv or phase)."""
    r, strides, split = geo.rank, geo.strides, p.split_axes()
    plane = math.prod(p.conv_out)
    phases = [1 if a in split else strides[a] for a in range(r)]
    s_u, convs = math.prod(phases), math.prod(strides[a] for a in split)
    per_conv = geo.c_out * s_u * plane
    tables = [np.arange(batch).reshape([batch] + [1] * (r + 1)) * (convs * per_conv),
              np.arange(geo.c_out).reshape([geo.c_out] + [1] * r) * (s_u * plane)]
    for a in range(r):
        pos = np.arange(p.sizes[a]) + p.starts[a]
        q, res = pos // strides[a], pos % strides[a]
        if a in split:  # which Conv: residues of the split axes, the first one slowest
            step = per_conv * math.prod(strides[b] for b in split if b > a)
        else:  # which phase within the Conv: residues of the other axes, channel-major
            step = plane * math.prod(phases[a + 1:])
        table = q * math.prod(p.conv_out[a + 1:]) + res * step
        tables.append(table.reshape([-1] + [1] * (r - 1 - a)))
    return [t.astype(np.int32) for t in tables]


def emit_phase(ctx, geo, p: Plan, x, w, bias: np.ndarray | None, etype) -> str:
    """One Conv per combination of residues of the split axes [-> Concat] -> GatherElements
    (a folded index); a single Conv may instead take -> DepthToSpace (3-D: Transpose, Reshape,
    DepthToSpace, Reshape, Transpose, Reshape; otherwise Reshape, Transpose, Reshape) [-> Slice]."""
    b, r, s = ctx.b, geo.rank, list(geo.strides)
    split = p.split_axes()
    phases = [1 if a in split else s[a] for a in range(r)]
    bname = None if bias is None else b.add_initializer(np.repeat(bias, math.prod(phases)), etype,
                                                        f"{b.layer_name}/bias")
    outs = []
    for combo in itertools.product(*(range(s[a]) for a in split)):
        residues = dict(zip(split, combo))
        taps = [p.taps[a][residues.get(a, 0)] for a in range(r)]
        pads = [(m - 1) * d - q0 for m, d, q0 in zip(taps, geo.dilations, p.q0)] + list(p.pads_end)
        inputs = [x, phase_filters(ctx, geo, w, residues, taps, phases)] + ([bname] if bname else [])
        outs.append(b.Conv(*inputs, group=geo.groups, kernel_shape=taps, dilations=list(geo.dilations),
                           pads=pads, strides=[1] * r))
    y = outs[0] if len(outs) == 1 else b.Concat(*outs, axis=1)
    if p.gather:
        batch = x.shape[0]
        index = folded_sum(b, gather_index(geo, p, batch), np.int32, "phase_index")
        flat = b.GatherElements(b.Reshape(y, i64(b, [-1])), b.Reshape(index, i64(b, [-1])), axis=0)
        return b.Reshape(flat, i64(b, [batch, geo.c_out, *p.sizes]))
    if math.prod(s) > 1:
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
    ``begin`` is pads_begin (explicit), 0 (valid) or the split of
    ``total = max(natural + output_padding - O, 0)`` (same_lower ``total // 2``, same_upper
    ``total - total // 2``), as OpenVINO's runtime does (convolution_backprop_data.py)."""
    b, r = ctx.b, geo.rank
    full = _convtranspose(ctx, geo, x, w, bias, [0] * r)
    natural = dims_of(b, Value(b, x.etype, None, name=full), 2)
    sizes = as_int64(b, out_shape)
    zeros = i64(b, [0] * r)
    if geo.auto_pad in ("explicit", "valid"):
        begin = i64(b, list(geo.pads_begin) if geo.auto_pad == "explicit" else [0] * r)
    else:  # total clamped at 0 (exact floor: Div of non-negatives)
        total = b.Max(b.Sub(b.Add(natural, i64(b, list(geo.output_padding))), sizes), zeros)
        half = b.Div(total, i64(b, [2] * r))
        begin = b.Sub(total, half) if geo.auto_pad == "same_upper" else half
    end = b.Add(begin, sizes)
    ext = b.Max(b.Sub(end, natural), zeros)
    padded = b.Pad(full, b.Concat(i64(b, [0] * (r + 4)), ext, axis=0))
    return b.Slice(padded, begin, end, i64(b, list(range(2, r + 2))))
