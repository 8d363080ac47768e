"""DFT-7, IDFT-7, RDFT-9 and IRDFT-9: discrete Fourier transforms over a list of axes; STFT-15.

A complex tensor is OpenVINO's (and ONNX's) real tensor with a last dim of 2 (real, imaginary).
Each axis is one ONNX ``DFT`` (DFT-17: ``axis`` attribute; at opset >= 20 DFT-20 with ``axis``
as an input), whose ``dft_length`` input zero-pads or trims the axis to the signal size exactly as
OpenVINO's ``signal_size`` does (-1: the axis' own size). An inverse DFT divides by the length on
each axis, so by the product of the signal sizes, as OpenVINO's IDFT/IRDFT do. Axes known only at
run time (DFT, IDFT, RDFT) need opset 20 (DFT-20's axis input); IRDFT's Concat needs them constant.

RDFT: a trailing dim of 1 (a real signal), a one-sided DFT on the *last axis of the list* (it
keeps ``n // 2 + 1`` bins), then a full DFT on the others. IRDFT (OpenVINO's reference): inverse
DFTs on all axes but the last of the list, then on the last one the Hermitian extension of the
first ``N // 2 + 1`` bins (zero-padded, ``N`` the signal size, ``2 * (n - 1)`` by default),
``X[N - k] = conj(X[k])``, an inverse DFT of length ``N`` and its real part.

STFT-15 -> ONNX STFT-17 (onesided): the window is zero-padded to frame_size, centred (left
``(frame_size - window) // 2``, OpenVINO's reference); frame_size, frame_step and the window may
be run-time inputs. transpose_frames puts the bins before the frames (Transpose).

f16 and f32 data are transformed in f64 (Cast, DFT, Cast back; in f32 where a signal size is known
only at run time, see ``_float``), f64 in f64
(inverses by conjugation, see ``_dft``). Arithmetic, not data movement: for f32, onnxruntime agrees
with the float64 oracle to f32 rounding of each output, OpenVINO to below 4e-7 of sum(|x|) (tests:
1e-5 * sum(|x|); f16 1e-3; f64 1e-12).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import const_ints, known_rank
from ._common.shapes import i64

FLOATS = ("f16", "f32", "f64")


@lowers("DFT", "opset7")
def dft7(ctx, layer, inputs):
    """DFT-7 (data[..., 2], axes, signal_size?) -> DFT per axis (dft_length for signal_size)."""
    return [_complex(ctx, layer, inputs, inverse=0)]


@lowers("IDFT", "opset7")
def idft7(ctx, layer, inputs):
    """IDFT-7 (data[..., 2], axes, signal_size?) -> DFT(inverse=1) per axis (1/N each)."""
    return [_complex(ctx, layer, inputs, inverse=1)]


@lowers("RDFT", "opset9")
def rdft9(ctx, layer, inputs):
    """RDFT-9 (real data, axes, signal_size?) -> Unsqueeze, DFT(onesided=1) on the last axis of
    the list, DFT on the others."""
    x = inputs[0]
    rank = known_rank(layer, x, 1)
    axes = _axes(ctx, layer, inputs[1], rank)
    lengths = _lengths(ctx, layer, inputs, axes, x, rank)
    y, back, _ = _float(ctx, layer, x, lengths)
    g = ctx.b
    y = g.Unsqueeze(y, i64(g, [-1]))
    order = [len(axes) - 1] + list(range(len(axes) - 1))
    for i in order:
        y = _dft(ctx, y, axes[i], lengths[i], onesided=int(i == len(axes) - 1))
    return [back(y)]


@lowers("IRDFT", "opset9")
def irdft9(ctx, layer, inputs):
    """IRDFT-9 (data[..., 2], axes, signal_size?) -> DFT(inverse=1) on all axes but the last of
    the list; on the last: Slice/Pad to N//2+1 bins, Slice(step -1), Mul [1, -1] (conjugate),
    Concat (Hermitian extension), DFT(inverse=1), Slice, Squeeze (the real part)."""
    x = inputs[0]
    rank = _complex_rank(layer, x)
    axes = _axes(ctx, layer, inputs[1], rank, complex_input=True, runtime_ok=False)
    lengths = _lengths(ctx, layer, inputs, axes, x, rank, hermitian=True)
    y, back, f64 = _float(ctx, layer, x, lengths)
    g = ctx.b
    for a, n in zip(axes[:-1], lengths[:-1]):
        y = _dft(ctx, y, a, n, inverse=1, f64=f64)
    last, n = axes[-1], lengths[-1]
    if n is None:  # 2 * (n_in - 1) on a dynamic axis
        n = g.Mul(g.Sub(g.Gather(g.Shape(x), i64(g, last)), i64(g, 1)), i64(g, 2))
    bins = n // 2 + 1 if isinstance(n, int) else g.Add(g.Div(n, i64(g, 2)), i64(g, 1))
    head = g.Slice(y, i64(g, [0]), _vector(g, bins), i64(g, [last]))
    have = x.shape[last]
    if not (isinstance(bins, int) and have is not None and have >= bins):
        pad = g.Sub(_vector(g, bins), g.Shape(head, start=last, end=last + 1))
        pads = g.Concat(i64(g, [0] * (rank + 1 + last)), pad, i64(g, [0] * (rank - last)), axis=0)
        head = g.Pad(head, pads, mode="constant")
    start = n - (n // 2 + 1) if isinstance(n, int) else g.Sub(n, bins)
    tail = g.Slice(head, _vector(g, start), i64(g, [0]), i64(g, [last]), i64(g, [-1]))
    tail = g.Mul(tail, g.const([1, -1], np.float64 if f64 else np.float32, "conj"))
    full = g.Concat(head, tail, axis=last)
    z = _dft(ctx, full, last, None, inverse=1, f64=f64)
    real = g.Squeeze(g.Slice(z, i64(g, [0]), i64(g, [1]), i64(g, [-1])), i64(g, [-1]))
    return [back(real)]


@lowers("STFT", "opset15")
def stft15(ctx, layer, inputs):
    """STFT-15 (signal[batch?, n], window[w], frame_size, frame_step) -> Pad (the window centred in
    frame_size), Unsqueeze, STFT(onesided=1), [Transpose for transpose_frames], [Squeeze]."""
    x, window, size_v, step_v = inputs
    rank = known_rank(layer, x, 1)
    if rank > 2:
        raise InvalidLayer(layer, f"STFT needs a signal of rank 1 or 2, got {rank}")
    if window.rank is not None and window.rank != 1:
        raise InvalidLayer(layer, f"STFT needs a 1-D window, got rank {window.rank}")
    if window.etype != x.etype:
        raise InvalidLayer(layer, f"signal ({x.etype.name}) and window ({window.etype.name}) differ in type")
    y, back, _ = _float(ctx, layer, x)
    w, _, _ = _float(ctx, layer, window)
    g = ctx.b
    size, step = (_scalar(ctx, layer, v, what) for v, what in ((size_v, "frame_size"), (step_v, "frame_step")))
    have = window.shape[0] if window.shape is not None else None
    if isinstance(size, int) and have is not None:
        if have > size:
            raise InvalidLayer(layer, f"the window ({have}) is longer than frame_size ({size})")
        left = (size - have) // 2
        if have != size:
            w = g.Pad(w, i64(g, [left, size - have - left]), mode="constant")
    else:  # pads known at run time: left = (size - w) // 2, right = size - w - left
        extra = g.Sub(_vector(g, size), g.Shape(w))
        left = g.Div(extra, i64(g, [2]))
        w = g.Pad(w, g.Concat(left, g.Sub(extra, left), axis=0), mode="constant")
    if rank == 1:
        y = g.Unsqueeze(y, i64(g, [0]))
    y = g.STFT(g.Unsqueeze(y, i64(g, [-1])), step if isinstance(step, str) else i64(g, step), w,
               size if isinstance(size, str) else i64(g, size), onesided=1)
    if layer.attrs["transpose_frames"]:
        y = g.Transpose(y, perm=[0, 2, 1, 3])
    if rank == 1:
        y = g.Squeeze(y, i64(g, [0]))
    return [back(y)]


def _scalar(ctx, layer, v, what):
    """A constant positive int, or a run-time int64 scalar tensor name."""
    if v.etype is not None and not v.etype.is_integer:
        raise InvalidLayer(layer, f"{what} must be an integer, got {v.etype.name}")
    if v.is_const:
        values = const_ints(layer, v, what)
        if len(values) != 1 or values[0] < 1:
            raise InvalidLayer(layer, f"{what} must be one positive value, got {values}")
        return values[0]
    g = ctx.b
    s = v.name if v.etype.name == "i64" else g.Cast(v, to=7)
    return g.Reshape(s, i64(g, []))


# -- shared steps ---------------------------------------------------------------------------------
def _complex(ctx, layer, inputs, inverse):
    x = inputs[0]
    rank = _complex_rank(layer, x)
    axes = _axes(ctx, layer, inputs[1], rank, complex_input=True)
    lengths = _lengths(ctx, layer, inputs, axes, x, rank)
    y, back, f64 = _float(ctx, layer, x, lengths)
    for a, n in zip(axes, lengths):
        y = _dft(ctx, y, a, n, inverse=inverse, f64=f64)
    return back(y)


def _dft(ctx, y, axis, length, inverse=0, onesided=0, f64=False):
    """One ONNX DFT on ``axis`` (>= 0) with an optional dft_length (int or scalar tensor name).
    An f64 inverse is conj(DFT(conj(y))) / n: onnxruntime 1.32's f64 inverse DFT of a length that is
    not a power of 2 is only float-accurate (3e-8), its forward DFT double-accurate."""
    g = ctx.b
    size = None if length is None else (i64(g, length) if isinstance(length, int) else length)
    at = axis if isinstance(axis, str) else i64(g, axis)
    if inverse and f64:
        conj = g.const([1, -1], np.float64, "conj")
        z = g.Mul(_dft(ctx, g.Mul(y, conj), axis, length), conj)
        n = g.const(float(length), np.float64, "n") if isinstance(length, int) else \
            g.Cast(length if length is not None else g.Gather(g.Shape(y), at), to=11)
        return g.Div(z, n)
    if ctx.opset >= 20:
        return g.DFT(y, size, at, inverse=inverse, onesided=onesided)
    return g.DFT(y, size, axis=axis, inverse=inverse, onesided=onesided)


def _complex_rank(layer, x) -> int:
    """The rank without the trailing complex dim (InvalidLayer unless that dim is 2)."""
    rank = known_rank(layer, x, 2) - 1
    if x.shape[-1] not in (None, 2):
        raise InvalidLayer(layer, f"the last dim of complex data must be 2, got {x.shape[-1]}")
    return rank


def _axes(ctx, layer, v, rank, complex_input=False, runtime_ok=True) -> list:
    """Constant axes in [0, rank), distinct (negative ones count from ``rank``); axes known at run
    time (opset >= 20, DFT-20 takes the axis as an input): one int64 scalar tensor per axis."""
    if not v.is_const:
        if not runtime_ok:
            raise UnsupportedLayer(layer, "axes known only at run time are not supported (the Hermitian "
                                          "extension concatenates along the axis: ONNX Concat needs a constant axis)")
        ctx.require_opset(layer, 20, "axes known only at run time (DFT-20 takes the axis as an input)")
        if v.shape is None or len(v.shape) != 1 or v.shape[0] is None:
            raise UnsupportedLayer(layer, "run-time axes need a static number of axes")
        g = ctx.b
        a = v.name if v.etype.name == "i64" else g.Cast(v, to=7)
        a = g.Mod(g.Add(a, i64(g, rank)), i64(g, rank))  # [-rank, rank) -> [0, rank)
        return [g.Gather(a, i64(g, i)) for i in range(v.shape[0])]
    axes = const_ints(layer, v, "axes")
    where = "the complex rank" if complex_input else "the rank"
    if not axes or any(not -rank <= a < rank for a in axes):
        raise InvalidLayer(layer, f"axes {axes} out of range for {where} {rank}")
    axes = [a % rank for a in axes]
    if len(set(axes)) != len(axes):
        raise InvalidLayer(layer, f"axes {axes} repeat an axis")
    return axes


def _lengths(ctx, layer, inputs, axes, x, rank, hermitian=False) -> list:
    """Per axis: None (the axis' size), an int, or a run-time int64 scalar tensor name. For IRDFT
    (``hermitian``) the last axis' default is 2 * (n - 1): an int when n is known, else None."""
    g = ctx.b
    k = len(axes)
    if len(inputs) < 3:
        sizes = [-1] * k
    elif inputs[2].is_const:
        sizes = const_ints(layer, inputs[2], "signal_size")
    else:
        s = inputs[2]
        if s.shape is not None and s.shape != (k,) and list(s.shape) != [k]:
            raise InvalidLayer(layer, f"signal_size has shape {list(s.shape)}, axes {k} values")
        s64 = s.name if s.etype.name == "i64" else g.Cast(s, to=7)
        out = []
        for i, a in enumerate(axes):
            si = g.Gather(s64, i64(g, i))
            dim = g.Gather(g.Shape(x), a if isinstance(a, str) else i64(g, a))
            if hermitian and i == k - 1:
                dim = g.Mul(g.Sub(dim, i64(g, 1)), i64(g, 2))
            out.append(g.Where(g.Equal(si, i64(g, -1)), dim, si))
        return out
    if len(sizes) != k:
        raise InvalidLayer(layer, f"signal_size has {len(sizes)} values, axes {k}")
    if any(s < 1 and s != -1 for s in sizes):
        raise InvalidLayer(layer, f"signal_size {sizes} must be >= 1 or -1")
    out = [None if s == -1 else s for s in sizes]
    if hermitian and out[-1] is None and x.shape[axes[-1]] is not None:
        out[-1] = 2 * (x.shape[axes[-1]] - 1)
        if out[-1] < 1:
            raise InvalidLayer(layer, "IRDFT of one bin needs a signal_size for its last axis")
    return out


def _float(ctx, layer, x, lengths=()):
    """(x in the compute type, a function back to x's type, whether that is f64): every float type
    is computed in f64. onnxruntime's f32 DFT of a length that is not a power of 2 (Bluestein's
    algorithm) is off by about 6e-7 of the largest bin everywhere, bins that are exactly 0
    included (3.4e-4 on the ONNX node test ``test_dft``), where OpenVINO's f32 kernel and the f64
    transform rounded to f32 are within f32 rounding. Where a length is known only at run time
    (``lengths`` holds a tensor name) f16 is computed in f32 and f32 in f32: onnxruntime 1.32
    reuses the DFT's input buffer for its output when the input is a Cast's (a shape mismatch)."""
    name = x.etype.name if x.etype else "?"
    if name not in FLOATS:
        raise UnsupportedLayer(layer, f"{layer.type} on {name} is not supported ({', '.join(FLOATS)})")
    ctx.require_opset(layer, 17, f"{layer.type} (ONNX DFT)")
    g = ctx.b
    if name == "f64":
        return x.name, (lambda y: y), True
    wide = all(n is None or isinstance(n, int) for n in lengths)
    if name == "f32" and not wide:
        return x.name, (lambda y: y), False
    return g.Cast(x, to=11 if wide else 1), (lambda y: g.Cast(y, to=x.etype.onnx)), wide


def _vector(g, v):
    """A 1-D int64 tensor of one value (an int or a scalar tensor name)."""
    return i64(g, [v]) if isinstance(v, int) else g.Unsqueeze(v, i64(g, [0]))
