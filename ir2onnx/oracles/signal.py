"""Oracles of DFT-7, IDFT-7, RDFT-9 and IRDFT-9 from the spec's formulas, in float64/complex128.

For one axis of signal size ``N`` (the input zero-padded or trimmed to ``N``):
``Y[k] = sum_j X[j] * exp(-2*pi*i*j*k/N)`` (DFT), ``exp(+...)/N`` (IDFT); several axes apply it
per axis. RDFT: the DFT of the real signal, keeping ``N//2 + 1`` bins on the last axis of the
list. IRDFT: inverse DFTs on all axes but the last of the list; on the last, the real part of
``(1/N) sum_k E[k] exp(2*pi*i*k*n/N)`` with ``E[k] = X[k]`` for ``k <= N//2`` (0 past the input)
and ``E[k] = conj(X[N - k])`` above (``N`` = signal size, ``2 * (n - 1)`` by default).
The output has the input's element type.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidLayer
from .registry import oracle


def _transform(c: np.ndarray, axis: int, n: int, inverse: bool) -> np.ndarray:
    """The 1-D (I)DFT of size ``n`` along ``axis`` by the formula, input padded/trimmed to ``n``."""
    c = np.moveaxis(c, axis, -1)
    src = np.zeros(c.shape[:-1] + (n,), np.complex128)
    keep = min(n, c.shape[-1])
    src[..., :keep] = c[..., :keep]
    j = np.arange(n)
    sign = 1.0 if inverse else -1.0
    twiddle = np.exp(sign * 2j * np.pi * (np.outer(j, j) % n) / n)  # twiddle[j, k]
    out = src @ twiddle
    if inverse:
        out /= n
    return np.moveaxis(out, -1, axis)


def _axes(layer, axes, rank):
    axes = [int(a) for a in np.asarray(axes).reshape(-1)]
    if not axes or any(not -rank <= a < rank for a in axes):
        raise InvalidLayer(layer, f"axes {axes} out of range for rank {rank}")
    axes = [a % rank for a in axes]
    if len(set(axes)) != len(axes):
        raise InvalidLayer(layer, f"axes {axes} repeat an axis")
    return axes


def _sizes(layer, inputs, axes, shape):
    sizes = [-1] * len(axes) if len(inputs) < 3 else [int(s) for s in np.asarray(inputs[2]).reshape(-1)]
    if len(sizes) != len(axes) or any(s < 1 and s != -1 for s in sizes):
        raise InvalidLayer(layer, f"signal_size {sizes} does not fit axes {axes}")
    return [shape[a] if s == -1 else s for a, s in zip(axes, sizes)]


def _complex(layer, x):
    if x.ndim < 2 or x.shape[-1] != 2:
        raise InvalidLayer(layer, f"complex data needs a last dim of 2, got shape {list(x.shape)}")
    return x[..., 0].astype(np.float64) + 1j * x[..., 1].astype(np.float64)


def _pack(c: np.ndarray, dtype) -> np.ndarray:
    return np.stack([c.real, c.imag], axis=-1).astype(dtype)


def _complex_dft(layer, inputs, inverse):
    x = np.asarray(inputs[0])
    c = _complex(layer, x)
    axes = _axes(layer, inputs[1], c.ndim)
    for a, n in zip(axes, _sizes(layer, inputs, axes, c.shape)):
        c = _transform(c, a, n, inverse)
    return [_pack(c, x.dtype)]


@oracle("DFT", "opset7")
def dft7(layer, inputs):
    return _complex_dft(layer, inputs, inverse=False)


@oracle("IDFT", "opset7")
def idft7(layer, inputs):
    return _complex_dft(layer, inputs, inverse=True)


@oracle("RDFT", "opset9")
def rdft9(layer, inputs):
    x = np.asarray(inputs[0])
    c = x.astype(np.complex128)
    axes = _axes(layer, inputs[1], c.ndim)
    for a, n in zip(axes, _sizes(layer, inputs, axes, c.shape)):
        c = _transform(c, a, n, inverse=False)
    last = axes[-1]
    c = np.take(c, np.arange(c.shape[last] // 2 + 1), axis=last)
    return [_pack(c, x.dtype)]


@oracle("IRDFT", "opset9")
def irdft9(layer, inputs):
    x = np.asarray(inputs[0])
    c = _complex(layer, x)
    axes = _axes(layer, inputs[1], c.ndim)
    shape = list(c.shape)
    last = axes[-1]
    shape[last] = 2 * (shape[last] - 1)
    sizes = _sizes(layer, inputs, axes, shape)
    for a, n in zip(axes[:-1], sizes[:-1]):
        c = _transform(c, a, n, inverse=True)
    big_n = sizes[-1]
    if big_n < 1:
        raise InvalidLayer(layer, "IRDFT of one bin needs a signal_size for its last axis")
    c = np.moveaxis(c, last, -1)
    extended = np.zeros(c.shape[:-1] + (big_n,), np.complex128)
    for k in range(big_n):
        src = k if k <= big_n // 2 else big_n - k
        if src < c.shape[-1]:
            extended[..., k] = c[..., src] if k <= big_n // 2 else np.conj(c[..., src])
    n = np.arange(big_n)
    phase = np.exp(2j * np.pi * (np.outer(n, n) % big_n) / big_n)  # phase[k, n]
    y = (extended @ phase).real / big_n
    return [np.moveaxis(y, -1, last).astype(x.dtype)]


@oracle("STFT", "opset15")
def stft15(layer, inputs):
    """Frame t of a signal row starts at t * frame_step; its samples times the window (zero-padded
    to frame_size, centred: ``(frame_size - len(window)) // 2`` zeros before) go through the DFT,
    keeping ``frame_size // 2 + 1`` bins; frames = (n - frame_size) // frame_step + 1.
    Output [batch?, frames, bins, 2], or [batch?, bins, frames, 2] with transpose_frames."""
    x, window = np.asarray(inputs[0]), np.asarray(inputs[1], np.float64)
    size, step = int(np.asarray(inputs[2]).reshape(-1)[0]), int(np.asarray(inputs[3]).reshape(-1)[0])
    if x.ndim not in (1, 2) or window.ndim != 1 or window.size > size or size < 1 or step < 1:
        raise InvalidLayer(layer, f"STFT of signal {list(x.shape)}, window {list(window.shape)}, "
                                  f"frame_size {size}, frame_step {step}")
    rows = x.reshape(-1, x.shape[-1]).astype(np.float64)
    if rows.shape[1] < size:
        raise InvalidLayer(layer, f"frame_size {size} exceeds the signal length {rows.shape[1]}")
    padded = np.zeros(size)
    left = (size - window.size) // 2
    padded[left:left + window.size] = window
    frames = (rows.shape[1] - size) // step + 1
    bins = size // 2 + 1
    j = np.arange(size)
    twiddle = np.exp(-2j * np.pi * (np.outer(j, np.arange(bins)) % size) / size)  # twiddle[j, k]
    out = np.zeros((rows.shape[0], frames, bins), np.complex128)
    for b in range(rows.shape[0]):
        for t in range(frames):
            out[b, t] = (rows[b, t * step:t * step + size] * padded) @ twiddle
    if layer.attrs["transpose_frames"]:
        out = out.transpose(0, 2, 1)
    if x.ndim == 1:
        out = out[0]
    return [_pack(out, x.dtype)]
