"""Selftest cases of ScaledDotProductAttention-13. Compared with the oracle within the per-type
tolerances of :mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, ov_build, param


def _sdpa(causal, mask=False):
    def make(ops):
        q, k, v = (param(ops, [1, 2, 4, 8], name=n) for n in "qkv")
        params, args = [q, k, v], [q, k, v]
        if mask:
            m = param(ops, [1, 1, 4, 4], np.bool_, "m")
            params.append(m)
            args.append(m)
        return [(ops.scaled_dot_product_attention(*args, causal=causal), "y")], params
    return make


def _sdpa_expect(causal):
    def expect(f):
        q, k, v = (f[n].astype(np.float64) for n in "qkv")
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(8)
        if causal:
            s = s + np.where(np.arange(4)[None, :] > np.arange(4)[:, None], -np.inf, 0)
        w = np.exp(s - s.max(-1, keepdims=True))
        return ((w / w.sum(-1, keepdims=True)) @ v).astype(np.float32)
    return expect


def _sdpa_mask(rng):
    m = rng.random((1, 1, 4, 4)) > 0.4
    m[..., 0] = True  # every query keeps a key
    return {"m": m}


SDPA = ("ScaledDotProductAttention", "opset13")


CASES = [
    Case("sdpa/causal", SDPA, ov_build(_sdpa(True)), exact=False, expect={"y": _sdpa_expect(True)},
         source="ScaledDotProductAttention-13: the spec's pseudo-code, causal"),
    Case("sdpa/no-mask", SDPA, ov_build(_sdpa(False)), exact=False, expect={"y": _sdpa_expect(False)}),
    Case("sdpa/boolean-mask", SDPA, ov_build(_sdpa(False, True)), exact=False, inputs=_sdpa_mask),
]
