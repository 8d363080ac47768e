"""Element-by-element building blocks that oracles of several op families share: a float input in
float64 (:func:`as_float64`), a scalar function mapped over every element (:func:`map_float`) or a formula on the whole
array (:func:`map_array`),
numpy broadcasting by index arithmetic (:func:`broadcast_shape`, :func:`pick`,
:func:`map_broadcast`), an axis in range
(:func:`normalize_axis`, :func:`axis_input`), indices in range (:func:`index_in`,
:func:`index_tuple`), the positions of a shape (:func:`positions`), an integer input's values
(:func:`ints`) and integer wrapping modulo 2^bits (:func:`wrap`). Like every oracle
module, it knows nothing of ONNX or the lowerings."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer

_FLOATS = ("float16", "float32", "float64")


def as_float64(layer, x: np.ndarray) -> np.ndarray:
    """``x`` in float64; UnsupportedLayer unless it is f16, f32 or f64."""
    if x.dtype.name not in _FLOATS:
        raise UnsupportedLayer(layer, f"{layer.type} on {x.dtype} is not supported")
    return x.astype(np.float64)


def map_float(layer, x: np.ndarray, fn) -> list[np.ndarray]:
    """``fn`` (float -> float) on every element of float ``x`` in float64, rounded once to x's dtype."""
    v = as_float64(layer, x)
    if v.size == 0:
        return [v.astype(x.dtype)]
    # numpy.frompyfunc calls fn on each element as a Python float, without an index loop in Python
    with np.errstate(all="ignore"):  # fn's NaNs and infinities are results, not accidents
        out = np.asarray(np.frompyfunc(fn, 1, 1)(v.ravel()), dtype=np.float64).reshape(v.shape)
    return [out.astype(x.dtype)]


def map_array(layer, x: np.ndarray, fn) -> list[np.ndarray]:
    """``fn`` on the whole of float ``x`` in float64 (``fn``: a formula of numpy's per-element
    functions, ndarray -> ndarray), rounded once to x's dtype: the same values as :func:`map_float`
    with the scalar formula, at numpy's speed (the per-element activations of a CNN run over
    millions of elements: ``ir2onnx check`` on a detector spent most of its oracle time there)."""
    v = as_float64(layer, x)
    with np.errstate(all="ignore"):  # fn's NaNs and infinities are results, not accidents
        out = np.asarray(fn(v), dtype=np.float64)
    return [out.astype(x.dtype)]


def broadcast_shape(layer, a: np.ndarray, b: np.ndarray) -> tuple[int, ...]:
    """The output shape of two operands under the layer's ``auto_broadcast`` (numpy or none)."""
    mode = layer.attrs.get("auto_broadcast", "numpy")
    if mode == "none":
        if a.shape != b.shape:
            raise InvalidLayer(layer, f"auto_broadcast='none' needs equal shapes, got {a.shape} and {b.shape}")
        return a.shape
    if mode != "numpy":
        raise UnsupportedLayer(layer, f"auto_broadcast='{mode}'")
    rank = max(a.ndim, b.ndim)
    pa, pb = (1,) * (rank - a.ndim) + a.shape, (1,) * (rank - b.ndim) + b.shape
    out = []
    for x, y in zip(pa, pb):
        if x != y and 1 not in (x, y):
            raise InvalidLayer(layer, f"shapes {a.shape} and {b.shape} do not broadcast")
        out.append(y if x == 1 else x)
    return tuple(out)


def pick(x: np.ndarray, pos: tuple[int, ...]):
    """Element of ``x`` at output position ``pos`` under numpy broadcasting (index arithmetic)."""
    pos = pos[len(pos) - x.ndim:]
    return x[tuple(0 if d == 1 else p for d, p in zip(x.shape, pos))]


def normalize_axis(layer, axis: int, rank: int) -> int:
    """``axis`` in ``[0, rank)``; InvalidLayer outside ``[-rank, rank)``."""
    if not -rank <= axis < rank:
        raise InvalidLayer(layer, f"axis {axis} out of range for rank {rank}")
    return axis % rank


def wrap(value: int, dtype: np.dtype):
    """A Python integer wrapped modulo 2^bits into ``dtype``'s range (two's complement)."""
    bits = dtype.itemsize * 8
    value %= 1 << bits
    if dtype.kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def _broadcast_all(layer, *arrays: np.ndarray) -> tuple[int, ...]:
    shape = arrays[0].shape
    for other in arrays[1:]:
        shape = broadcast_shape(layer, np.empty(shape), other)
    return shape


def map_broadcast(layer, arrays, fn, dtype) -> np.ndarray:
    """``fn`` on the elements of ``arrays`` at every position of their broadcast shape (the layer's
    ``auto_broadcast``), into a new array of ``dtype``. ``fn`` receives Python scalars (numpy
    scalars for the narrow float types that Python has no scalar for)."""
    shape = _broadcast_all(layer, *arrays)
    out = np.empty(shape, dtype)
    if all(a.dtype.kind in "biuf" for a in arrays):
        # numpy.frompyfunc calls fn on every position's elements as Python scalars (bool, int,
        # float: each holds the element exactly), without an index loop in Python
        with np.errstate(all="ignore"):
            out[...] = np.frompyfunc(fn, len(arrays), 1)(*[np.broadcast_to(a, shape) for a in arrays])
        return out
    for pos in itertools.product(*[range(d) for d in shape]):  # narrow float types: numpy scalars
        out[pos] = fn(*[pick(a, pos) for a in arrays])
    return out


def positions(shape):
    """Every index tuple of ``shape``, in row-major order."""
    return itertools.product(*[range(d) for d in shape])


def axis_input(layer, axis, rank):
    """An axis given as an attribute or a one-element input, normalized into ``[0, rank)``."""
    axis = int(np.asarray(axis).reshape(-1)[0])
    if not -rank <= axis < rank:
        raise InvalidLayer(layer, f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def index_in(layer, value, size):
    """One index into a dim of ``size``, negative ones counted from the end; InvalidLayer outside."""
    value = int(value)
    if not -size <= value < size:
        raise InvalidLayer(layer, f"index {value} is out of range for a dim of size {size}")
    return value % size


def index_tuple(layer, tup, dims) -> tuple[int, ...]:
    """An index tuple into ``dims``, negative indices counted from the end; InvalidLayer outside."""
    out = []
    for v, d in zip(tup, dims):
        v = int(v)
        if not -d <= v < d:
            raise InvalidLayer(layer, f"index {v} out of range for a dim of size {d}")
        out.append(v % d)
    return tuple(out)


def ints(a) -> list[int]:
    """The values of an integer input as Python ints."""
    return [int(v) for v in np.asarray(a).reshape(-1)]


# -- the error function on whole float64 arrays (Erf, Gelu) -----------------------------------
_SERIES_END = 2.5  # below: the series (40 terms); above: the continued fraction (40 terms)


def _erf_series(a: np.ndarray) -> np.ndarray:
    """erf(a) = 2/sqrt(pi) exp(-a^2) sum_n 2^n a^(2n+1) / (1*3*...*(2n+1)) (positive terms: no
    cancellation); 40 terms: within 2e-15 relative of math.erf for 0 <= a < 2.5."""
    term, total, two = a.copy(), a.copy(), 2 * a * a
    for n in range(1, 40):
        term = term * two / (2 * n + 1)
        total = total + term
    return 2 / math.sqrt(math.pi) * np.exp(-a * a) * total


def _erfc_fraction(a: np.ndarray) -> np.ndarray:
    """erfc(a) = exp(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...)))) evaluated from
    the 40th term up: within 4e-15 relative of math.erfc for a >= 2.5 (and 0 at infinity)."""
    frac = a.copy()
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for k in range(40, 0, -1):
            frac = a + (k / 2) / frac
        return np.where(np.isinf(a), 0.0, np.exp(-a * a) / math.sqrt(math.pi) / frac)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function of float64 ``x``, element by element (NaN stays NaN)."""
    a = np.abs(x)
    near = a < _SERIES_END
    out = np.where(np.isnan(a), np.nan, 1.0)
    out[near] = _erf_series(a[near])
    far = a >= _SERIES_END
    out[far] = 1.0 - _erfc_fraction(a[far])
    return np.copysign(out, x)


def erfc(x: np.ndarray) -> np.ndarray:
    """1 - erf(x) of float64 ``x``, without the cancellation of that difference for x > 0."""
    a = np.abs(x)
    out = np.where(np.isnan(a), np.nan, 0.0)
    near = a < _SERIES_END
    out[near] = np.where(x[near] >= 0, 1.0 - _erf_series(a[near]), 1.0 + _erf_series(a[near]))
    far = a >= _SERIES_END
    out[far] = np.where(x[far] >= 0, _erfc_fraction(a[far]), 2.0 - _erfc_fraction(a[far]))
    return out
