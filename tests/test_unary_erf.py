"""The error function the Erf and Gelu oracles compute on whole arrays (oracles/elements.py: a
positive-term series below 2.5, a continued fraction of erfc above) against Python's math.erf."""
from __future__ import annotations

import math

import numpy as np

from ir2onnx.oracles.activations import gelu7
from ir2onnx.oracles.elements import erf, erfc


def test_erf_and_erfc_match_math():
    xs = np.concatenate([np.linspace(-8, 8, 160001), [1e-300, -1e-300, 2.4999999, 2.5, 27.0]])
    want = np.array([math.erf(v) for v in xs])
    assert np.max(np.abs(erf(xs) - want) / np.maximum(np.abs(want), 1e-300)) < 5e-15
    want = np.array([math.erfc(v) for v in xs])
    assert np.max(np.abs(erfc(xs) - want) / np.maximum(want, 1e-300)) < 1e-11
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(erf(special), [0.0, -0.0, 1.0, -1.0, np.nan])
    assert np.signbit(erf(special)[1])
    np.testing.assert_array_equal(erfc(special), [1.0, 1.0, 0.0, 2.0, np.nan])


class _Gelu:
    type, version, name, id = "Gelu", "opset7", "g", "0"
    attrs = {"approximation_mode": "ERF"}


def test_gelu_of_a_transformer_layer_equals_the_formula():
    """[1, 128, 3072] (a BERT-base FFN): within one f32 unit in the last place of
    0.5 x erfc(-x / sqrt(2)) with math.erfc in float64, the spec's 0.5 x (1 + erf(x / sqrt(2)))
    without its cancellation for negative x (which makes it 0 below x ~ -8.3: within 1e-7)."""
    x = (np.random.default_rng(0).standard_normal((1, 128, 3072)) * 3).astype(np.float32)
    got = gelu7(_Gelu(), [x])[0]
    values = x.astype(np.float64).ravel().tolist()
    want = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in values], np.float32).reshape(x.shape)
    np.testing.assert_array_max_ulp(got, want, maxulp=1)
    spec = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in values], np.float32).reshape(x.shape)
    np.testing.assert_allclose(got, spec, rtol=1e-6, atol=1e-7)
