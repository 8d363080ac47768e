"""Selftest cases of MVN-1/-6, GroupNormalization-12, BatchNormInference-1/-5 and NormalizeL2 (version 1
unless -N says otherwise). Compared with the oracle within the per-type tolerances of
:mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import importlib

import numpy as np

from .cases import Case, const, ir_build, ov_build, param


def _mvn(axes, mode, normalize=True):
    def make(ops):
        x = param(ops, [2, 3, 8])
        return [(ops.mvn(x, const(ops, axes), normalize, 1e-5, mode), "y")], [x]
    return make


def _mvn1(across):
    def make(ops):
        import openvino.opset2 as o2

        x = param(ops, [2, 3, 4, 5])
        return [(o2.mvn(x, across, True, 1e-5), "y")], [x]
    return make


def _mvn1_model_optimizer(w):
    """MVN-1 as Model Optimizer wrote it: version opset1, no reduction_axes."""
    x = w.parameter([1, 3, 4, 5], name="x")
    y = w.layer("MVN", "opset1", [x], {"across_channels": False, "normalize_variance": True, "eps": 1e-5},
                outputs=[("f32", [1, 3, 4, 5])])[0]
    w.result(y, name="y")


def _ln_expect(f):
    x = f["x"].astype(np.float64)
    c = x - x.mean(-1, keepdims=True)
    return (c / np.sqrt((c ** 2).mean(-1, keepdims=True) + 1e-5)).astype(np.float32)


def _normalize_l2(eps_mode):
    def make(ops):
        from openvino.utils.node_factory import NodeFactory

        x = param(ops, [1, 3, 2, 2])
        node = NodeFactory("opset1").create("NormalizeL2", [x.output(0), const(ops, [1]).output(0)],
                                            {"eps": 1e-6, "eps_mode": eps_mode})
        return [(node, "y")], [x]
    return make


_RNG = np.random.default_rng(12)
_SCALE = _RNG.uniform(0.5, 2, 8).astype(np.float32)
_BIAS = _RNG.standard_normal(8).astype(np.float32)
_BN = [_RNG.uniform(0.5, 2, 3), _RNG.standard_normal(3), _RNG.standard_normal(3), _RNG.uniform(0.1, 3, 3)]


def _group_norm(shape, groups, dtype=np.float32):
    def make(ops):
        import openvino.opset12 as ops12

        x = param(ops, list(shape), dtype)
        c = shape[1]
        y = ops12.group_normalization(x, const(ops, _SCALE[:c], dtype), const(ops, _BIAS[:c], dtype), groups, 1e-5)
        return [(y, "y")], [x]
    return make


def _gn_expect(groups):
    def expect(feeds):
        v = feeds["x"].astype(np.float64)
        r = v.reshape(v.shape[0], groups, -1)
        n = ((r - r.mean(2, keepdims=True)) / np.sqrt(r.var(2, keepdims=True) + 1e-5)).reshape(v.shape)
        shape = (-1,) + (1,) * (v.ndim - 2)
        return n * _SCALE[:v.shape[1]].reshape(shape) + _BIAS[:v.shape[1]].reshape(shape)
    return expect


def _batch_norm(version, shape=(2, 3, 4, 4), dtype=np.float32):
    def make(ops):
        mod = importlib.import_module(f"openvino.opset{version}")
        x = param(ops, list(shape), dtype)
        return [(mod.batch_norm_inference(x, *[const(ops, p, dtype) for p in _BN], 1e-3), "y")], [x]
    return make


def _bn_expect(feeds):
    g, b, m, v = (p.reshape(-1, 1, 1) for p in _BN)
    return g * (feeds["x"].astype(np.float64) - m) / np.sqrt(v + 1e-3) + b


CASES = [
    Case("mvn1/instance-norm", ("MVN", "opset2"), ov_build(_mvn1(False)), exact=False,
         source="MVN-1: Model Optimizer's instance normalization (face-detection-0105)"),
    Case("mvn1/across-channels", ("MVN", "opset2"), ov_build(_mvn1(True)), exact=False),
    Case("mvn1/model-optimizer", ("MVN", "opset1"), ir_build(_mvn1_model_optimizer), exact=False),
    Case("mvn6/layernorm-inside-sqrt", ("MVN", "opset6"), ov_build(_mvn([-1], "inside_sqrt")), exact=False,
         expect={"y": _ln_expect}, source="MVN-6: LayerNorm as OpenVINO's PyTorch frontend writes it"),
    Case("mvn6/outside-sqrt-axes-1-2", ("MVN", "opset6"), ov_build(_mvn([2, 1], "outside_sqrt")), exact=False),
    Case("mvn6/mean-only", ("MVN", "opset6"), ov_build(_mvn([1], "inside_sqrt", False)), exact=False,
         expect={"y": lambda f: f["x"] - f["x"].mean(1, keepdims=True)}),
    Case("normalizel2/channel-add", ("NormalizeL2", "opset1"), ov_build(_normalize_l2("add")), exact=False),
    Case("normalizel2/channel-max", ("NormalizeL2", "opset1"), ov_build(_normalize_l2("max")), exact=False),
    Case("groupnorm/4d-g4", ("GroupNormalization", "opset12"), ov_build(_group_norm((2, 8, 5, 7), 4)),
         exact=False, expect={"y": _gn_expect(4)}, source="GroupNormalization-12: a diffusion U-Net block"),
    Case("groupnorm/dynamic-f16", ("GroupNormalization", "opset12"),
         ov_build(_group_norm((None, 6, None, None), 3, np.float16)), exact=False, shapes={"x": (1, 6, 3, 4)}),
    Case("batchnorm5/const-params", ("BatchNormInference", "opset5"), ov_build(_batch_norm(5)), exact=False,
         expect={"y": _bn_expect}),
    Case("batchnorm1/gamma-beta-first", ("BatchNormInference", "opset1"), ov_build(_batch_norm(1)), exact=False,
         expect={"y": _bn_expect}),
]
