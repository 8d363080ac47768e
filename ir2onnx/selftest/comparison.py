"""Selftest cases of the transformer and segmentation ops: unary math and Power, comparisons,
logical ops, Select, ReduceMean/Max/Min, MVN-6, Split/VariadicSplit, Broadcast, Tile, Range, Pad
and ScaledDotProductAttention. Data movement and boolean results are compared bit for bit;
arithmetic within the per-type tolerances of :mod:`ir2onnx.compare`."""
from __future__ import annotations

import numpy as np

from .selftest_cases import Case, const, ov_build, param


def _unary(fn, shape=(2, 3, 4), dtype=np.float32):
    def make(ops):
        x = param(ops, list(shape), dtype)
        return [(getattr(ops, fn)(x), "y")], [x]
    return make


def _binary(fn, a_shape, b_shape, dtype=np.float32):
    def make(ops):
        a, b = param(ops, a_shape, dtype, "a"), param(ops, b_shape, dtype, "b")
        return [(getattr(ops, fn)(a, b), "y")], [a, b]
    return make


def _uniform(low, high, shape=(2, 3, 4), name="x"):
    return lambda rng: {name: rng.uniform(low, high, shape).astype(np.float32)}


def _small_ints(names_shapes, dtype=np.float32):
    return lambda rng: {n: rng.integers(-2, 3, s).astype(dtype) for n, s in names_shapes}


def _bools(names_shapes):
    return lambda rng: {n: rng.integers(0, 2, s).astype(bool) for n, s in names_shapes}


def _select(ops):
    c, t, e = param(ops, [2, 1, 4], np.bool_, "c"), param(ops, [3, 1], name="t"), param(ops, [4], name="e")
    return [(ops.select(c, t, e), "y")], [c, t, e]


def _reduce(fn, axes, keep):
    def make(ops):
        x = param(ops, [2, 3, 4])
        return [(getattr(ops, fn)(x, const(ops, axes), keep), "y")], [x]
    return make


def _mvn(axes, mode, normalize=True):
    def make(ops):
        x = param(ops, [2, 3, 8])
        return [(ops.mvn(x, const(ops, axes), normalize, 1e-5, mode), "y")], [x]
    return make


def _ln_expect(f):
    x = f["x"].astype(np.float64)
    c = x - x.mean(-1, keepdims=True)
    return (c / np.sqrt((c ** 2).mean(-1, keepdims=True) + 1e-5)).astype(np.float32)


def _split(ops):
    x = param(ops, [2, 6, 3])
    node = ops.split(x, const(ops, 1), 3)
    return [(node.output(i), f"y{i}") for i in range(3)], [x]


def _variadic_split(ops):
    x = param(ops, [2, None], np.int32)
    node = ops.variadic_split(x, const(ops, -1), const(ops, [1, -1, 2]))
    return [(node.output(i), f"y{i}") for i in range(3)], [x]


def _broadcast(opset, mode, shape, target, axes=None):
    def make(ops):
        import importlib

        o = importlib.import_module(f"openvino.{opset}")
        x = param(ops, shape)
        args = [x, const(ops, target)] + ([const(ops, axes)] if axes is not None else [])
        return [(o.broadcast(*args, mode) if opset == "opset1" else o.broadcast(*args, broadcast_spec=mode), "y")], [x]
    return make


def _broadcast_runtime(ops):
    x, like = param(ops, [3, 1]), param(ops, [None, 3, 4], name="like")
    return [(ops.broadcast(x, ops.shape_of(like)), "y")], [x, like]


def _tile(ops):
    x = param(ops, [2, 3], np.int64)
    return [(ops.tile(x, const(ops, [2, 1, 2])), "y")], [x]


def _range(ops):
    start, stop, step = (param(ops, [], np.int32, n) for n in ("start", "stop", "step"))
    return [(ops.range(start, stop, step, "i32"), "y")], [start, stop, step]


def _range_f32(ops):
    start, stop, step = (param(ops, [], np.float32, n) for n in ("start", "stop", "step"))
    return [(ops.range(start, stop, step, "f32"), "y")], [start, stop, step]


def _pad(opset, mode, begins, ends, shape=(3, 4)):
    def make(ops):
        import importlib

        x = param(ops, list(shape))
        o = importlib.import_module(f"openvino.{opset}")
        return [(o.pad(x, const(ops, begins), const(ops, ends), mode), "y")], [x]
    return make


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
PAD_X = {"x": np.arange(1, 13, dtype=np.float32).reshape(3, 4)}
SPLIT_X = {"x": np.arange(36, dtype=np.float32).reshape(2, 6, 3)}
BC1, BC3 = ("Broadcast", "opset1"), ("Broadcast", "opset3")

CMP = [("equal", "Equal"), ("not_equal", "NotEqual"), ("less", "Less"), ("less_equal", "LessEqual"),
       ("greater", "Greater"), ("greater_equal", "GreaterEqual")]
NP_CMP = {"Equal": np.equal, "NotEqual": np.not_equal, "Less": np.less, "LessEqual": np.less_equal,
          "Greater": np.greater, "GreaterEqual": np.greater_equal}


def _cmp_case(fn, op):
    return Case(f"{fn.replace('_', '')}/broadcast", (op, "opset1"), ov_build(_binary(fn, [2, 1, 4], [3, 1])),
                inputs=_small_ints([("a", (2, 1, 4)), ("b", (3, 1))]),
                expect={"y": lambda f, op=op: NP_CMP[op](f["a"], f["b"])})


def _logical_case(fn, op, version="opset1"):
    np_fn = getattr(np, fn)
    return Case(f"{fn.replace('_', '')}/broadcast", (op, version),
                ov_build(_binary(fn, [2, 4], [4], np.bool_)), inputs=_bools([("a", (2, 4)), ("b", (4,))]),
                expect={"y": lambda f: np_fn(f["a"], f["b"])})


CASES = [
    Case("erf/f32", ("Erf", "opset1"), ov_build(_unary("erf")), exact=False, inputs=_uniform(-3, 3)),
    Case("log/f32", ("Log", "opset1"), ov_build(_unary("log")), exact=False, inputs=_uniform(0.01, 20),
         expect={"y": lambda f: np.log(f["x"])}),
    Case("floor/f32", ("Floor", "opset1"), ov_build(_unary("floor")), inputs=_uniform(-5, 5),
         expect={"y": lambda f: np.floor(f["x"])}),
    Case("ceiling/f32", ("Ceiling", "opset1"), ov_build(_unary("ceiling")), inputs=_uniform(-5, 5),
         expect={"y": lambda f: np.ceil(f["x"])}),
    Case("negative/i32", ("Negative", "opset1"), ov_build(_unary("negative", dtype=np.int32)),
         expect={"y": lambda f: -f["x"]}),
    Case("abs/f32", ("Abs", "opset1"), ov_build(_unary("abs")), expect={"y": lambda f: np.abs(f["x"])}),
    Case("power/broadcast", ("Power", "opset1"), ov_build(_binary("power", [2, 3], [3])), exact=False,
         inputs=lambda rng: {"a": rng.uniform(0.1, 3, (2, 3)).astype(np.float32),
                             "b": rng.uniform(-2, 2, (3,)).astype(np.float32)},
         expect={"y": lambda f: f["a"] ** f["b"]}),
    *[_cmp_case(fn, op) for fn, op in CMP],
    Case("logicalnot/bool", ("LogicalNot", "opset1"), ov_build(_unary("logical_not", (2, 4), np.bool_)),
         inputs=_bools([("x", (2, 4))]), expect={"y": lambda f: ~f["x"]}),
    _logical_case("logical_and", "LogicalAnd"),
    _logical_case("logical_or", "LogicalOr"),
    _logical_case("logical_xor", "LogicalXor", "opset2"),
    Case("select/three-way-broadcast", ("Select", "opset1"), ov_build(_select),
         inputs=_bools([("c", (2, 1, 4))]), expect={"y": lambda f: np.where(f["c"], f["t"], f["e"])}),
    Case("reducemean/keep-dims", ("ReduceMean", "opset1"), ov_build(_reduce("reduce_mean", [0, -1], True)),
         exact=False, expect={"y": lambda f: f["x"].mean(axis=(0, 2), keepdims=True)}),
    Case("reducemax/axis1", ("ReduceMax", "opset1"), ov_build(_reduce("reduce_max", [1], False)),
         expect={"y": lambda f: f["x"].max(axis=1)}),
    Case("reducemin/axes-0-2", ("ReduceMin", "opset1"), ov_build(_reduce("reduce_min", [0, 2], False)),
         expect={"y": lambda f: f["x"].min(axis=(0, 2))}),
    Case("mvn6/layernorm-inside-sqrt", ("MVN", "opset6"), ov_build(_mvn([-1], "inside_sqrt")), exact=False,
         expect={"y": _ln_expect}, source="MVN-6: LayerNorm as OpenVINO's PyTorch frontend writes it"),
    Case("mvn6/outside-sqrt-axes-1-2", ("MVN", "opset6"), ov_build(_mvn([2, 1], "outside_sqrt")), exact=False),
    Case("mvn6/mean-only", ("MVN", "opset6"), ov_build(_mvn([1], "inside_sqrt", False)), exact=False,
         expect={"y": lambda f: f["x"] - f["x"].mean(1, keepdims=True)}),
    Case("split/three-parts", ("Split", "opset1"), ov_build(_split), inputs=SPLIT_X,
         expect={f"y{i}": SPLIT_X["x"][:, 2 * i:2 * i + 2] for i in range(3)}),
    Case("variadicsplit/minus-one-dynamic", ("VariadicSplit", "opset1"), ov_build(_variadic_split),
         inputs={"x": np.arange(14, dtype=np.int32).reshape(2, 7)},
         expect={"y0": lambda f: f["x"][:, :1], "y1": lambda f: f["x"][:, 1:5], "y2": lambda f: f["x"][:, 5:]}),
    Case("broadcast1/numpy", BC1, ov_build(_broadcast("opset1", "numpy", [3, 1], [2, 3, 4])),
         expect={"y": lambda f: np.broadcast_to(f["x"], (2, 3, 4))}),
    Case("broadcast1/explicit", BC1, ov_build(_broadcast("opset1", "explicit", [3], [2, 3, 4], [1])),
         expect={"y": lambda f: np.broadcast_to(f["x"].reshape(1, 3, 1), (2, 3, 4))}),
    Case("broadcast3/bidirectional", BC3, ov_build(_broadcast("opset15", "bidirectional", [3, 1], [2, 1, 4])),
         expect={"y": lambda f: f["x"] * np.ones((2, 1, 4), np.float32)}),
    Case("broadcast3/explicit-spec-example", BC3, ov_build(_broadcast("opset15", "explicit", [5, 5], [1, 5, 5, 2],
                                                                         [1, 2])),
         expect={"y": lambda f: np.broadcast_to(f["x"].reshape(1, 5, 5, 1), (1, 5, 5, 2))},
         source="Broadcast-3: the spec's [50, 50] -> [1, 50, 50, 16] example, smaller"),
    Case("broadcast3/run-time-target", BC3, ov_build(_broadcast_runtime), shapes={"like": (2, 3, 4)},
         expect={"y": lambda f: np.broadcast_to(f["x"], (2, 3, 4))}),
    Case("tile/repeats-longer-than-rank", ("Tile", "opset1"), ov_build(_tile),
         expect={"y": lambda f: np.tile(f["x"], [2, 1, 2])}),
    Case("range4/spec-example-2", ("Range", "opset4"), ov_build(_range),
         inputs={"start": np.array(23, np.int32), "stop": np.array(2, np.int32), "step": np.array(-3, np.int32)},
         expect={"y": np.array([23, 20, 17, 14, 11, 8, 5], np.int32)}, source="Range-4: worked example 2"),
    Case("range4/spec-example-3", ("Range", "opset4"), ov_build(_range_f32), exact=False,
         inputs={"start": np.array(1, np.float32), "stop": np.array(2.5, np.float32), "step": np.array(0.5, np.float32)},
         expect={"y": np.array([1, 1.5, 2], np.float32)}, source="Range-4: worked example 3"),
    Case("pad1/reflect", ("Pad", "opset1"), ov_build(_pad("opset1", "reflect", [0, 1], [2, 3])), inputs=PAD_X,
         expect={"y": lambda f: np.pad(f["x"], [(0, 2), (1, 3)], mode="reflect")},
         source="Pad-12: positive pads example (reflect)"),
    Case("pad12/symmetric-mixed", ("Pad", "opset12"), ov_build(_pad("opset15", "symmetric", [2, -1], [-1, 3])),
         inputs=PAD_X, expect={"y": np.array([[6, 7, 8, 8, 7, 6], [2, 3, 4, 4, 3, 2], [2, 3, 4, 4, 3, 2],
                                              [6, 7, 8, 8, 7, 6]], np.float32)},
         source="Pad-12: mixed pads example (symmetric)"),
    Case("pad12/edge-negative", ("Pad", "opset12"), ov_build(_pad("opset15", "edge", [-1, 2], [1, -2])),
         inputs=PAD_X, expect={"y": lambda f: np.pad(f["x"], [(0, 1), (2, 0)], mode="edge")[1:, :-2]}),
    Case("sdpa/causal", SDPA, ov_build(_sdpa(True)), exact=False, expect={"y": _sdpa_expect(True)},
         source="ScaledDotProductAttention-13: the spec's pseudo-code, causal"),
    Case("sdpa/no-mask", SDPA, ov_build(_sdpa(False)), exact=False, expect={"y": _sdpa_expect(False)}),
    Case("sdpa/boolean-mask", SDPA, ov_build(_sdpa(False, True)), exact=False, inputs=_sdpa_mask),
]
