"""The Convolution-1 / GroupConvolution-1 oracles (a strided window view and numpy.tensordot in
float64 since issue 23) against the spec's formula accumulated kernel tap by kernel tap:
``out[n, co, o] = sum_{ci, k} x[n, ci, o*s - pad_begin + k*d] * w[co, ci, k]`` (taps in the
padding read zeros), on small cases of every rank, padding mode and type (integers bit for bit,
floats within one unit in the last place), and on a moderate ResNet-sized layer."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from ir2onnx.oracles.convolution import convolution, group_convolution

from util import equal_to_the_formula


class _Layer:
    type, version, name, id = "Convolution", "opset1", "conv", "0"

    def __init__(self, **attrs):
        self.attrs = attrs


def _pads(x, k, s, d, mode, pb, pe):
    span = (k - 1) * d + 1
    if mode == "valid":
        return 0, (x - span) // s + 1
    if mode in ("same_upper", "same_lower"):
        out = -(-x // s)
        total = max((out - 1) * s + span - x, 0)
        return (total // 2 if mode == "same_upper" else total - total // 2), out
    return pb, (x + pb + pe - span) // s + 1


def _spec(x, w, groups, strides, dilations, mode, pads_begin, pads_end):
    rank = x.ndim - 2
    geo = [_pads(x.shape[2 + i], w.shape[2 + i], strides[i], dilations[i], mode, pads_begin[i], pads_end[i])
           for i in range(rank)]
    acc = np.int64 if x.dtype.kind in "iu" else np.float64
    xf, wf = x.astype(acc), w.astype(acc)
    cin_g, cout_g = w.shape[1], w.shape[0] // groups
    out = np.zeros((x.shape[0], w.shape[0], *[g[1] for g in geo]), acc)
    for g in range(groups):
        xs, ws = xf[:, g * cin_g:(g + 1) * cin_g], wf[g * cout_g:(g + 1) * cout_g]
        for k in itertools.product(*map(range, w.shape[2:])):
            # input position of every output position on each axis, and whether it is inside
            pos = [np.arange(geo[i][1]) * strides[i] - geo[i][0] + k[i] * dilations[i] for i in range(rank)]
            inside = [(p >= 0) & (p < x.shape[2 + i]) for i, p in enumerate(pos)]
            taken = xs[(slice(None), slice(None), *np.ix_(*[np.clip(p, 0, x.shape[2 + i] - 1) for i, p in enumerate(pos)]))]
            mask = np.ones([len(p) for p in pos], bool)
            for i, m in enumerate(inside):
                mask = mask & m.reshape([-1 if j == i else 1 for j in range(rank)])
            taken = np.where(mask, taken, 0)
            out[:, g * cout_g:(g + 1) * cout_g] += np.einsum("nc...,oc->no...", taken, ws[(slice(None), slice(None), *k)])
    return out.astype(x.dtype)


CASES = [  # shape, kernel, strides, dilations, mode, pads_begin, pads_end, groups
    ((2, 4, 7), (6, 4, 3), [2], [1], "explicit", [1], [2], 1),
    ((1, 4, 6, 5), (4, 2, 3, 2), [1, 2], [2, 1], "same_upper", [0, 0], [0, 0], 2),
    ((1, 4, 6, 5), (8, 1, 3, 3), [2, 1], [1, 1], "same_lower", [0, 0], [0, 0], 4),
    ((2, 2, 5, 6), (3, 2, 2, 3), [1, 1], [1, 2], "valid", [0, 0], [0, 0], 1),
    ((1, 3, 4, 5, 4), (2, 3, 2, 2, 3), [1, 2, 1], [1, 1, 2], "explicit", [1, 0, 2], [0, 1, 1], 1),
    ((1, 2, 3, 3), (2, 2, 1, 1), [3, 3], [1, 1], "explicit", [2, 2], [2, 2], 1),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int8])
@pytest.mark.parametrize("shape,kernel,strides,dilations,mode,pb,pe,groups", CASES)
def test_equals_the_spec_formula(shape, kernel, strides, dilations, mode, pb, pe, groups, dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 30).astype(dtype)
    w = (rng.standard_normal(kernel) * 30).astype(dtype)
    layer = _Layer(strides=strides, dilations=dilations, auto_pad=mode, pads_begin=pb, pads_end=pe)
    if groups == 1:
        got = convolution(layer, [x, w])[0]
    else:
        got = group_convolution(layer, [x, w.reshape((groups, -1) + w.shape[1:])])[0]
    want = _spec(x, w, groups, strides, dilations, mode, pb, pe)
    equal_to_the_formula(got, want)


def test_resnet_sized_convolution_finishes_and_equals_the_formula():
    """[1, 64, 56, 56] * [64, 64, 3, 3], pads 1: 116M multiply-adds, well under a second."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 64, 56, 56)).astype(np.float32)
    w = (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32)
    layer = _Layer(strides=[1, 1], dilations=[1, 1], auto_pad="explicit", pads_begin=[1, 1], pads_end=[1, 1])
    got = convolution(layer, [x, w])[0]
    want = _spec(x, w, 1, [1, 1], [1, 1], "explicit", [1, 1], [1, 1])
    assert got.shape == (1, 64, 56, 56)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
