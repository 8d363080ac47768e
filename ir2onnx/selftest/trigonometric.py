"""Selftest cases of the small common ops: HSigmoid, SoftSign, Selu, Sign, Round, the
trigonometric family, ShuffleChannels and TopK-1/-3. Sign, Round, ShuffleChannels and TopK are
compared bit for bit; the rest within the per-type tolerances of :mod:`ir2onnx.compare`."""
from __future__ import annotations

import numpy as np

from .selftest_cases import Case, const, ov_build, param

TRIG_RANGES = {"Sin": (-10, 10), "Cos": (-10, 10), "Tan": (-1.5, 1.5), "Asin": (-1, 1), "Acos": (-1, 1),
               "Atan": (-10, 10), "Sinh": (-5, 5), "Cosh": (-5, 5), "Asinh": (-10, 10), "Acosh": (1, 10),
               "Atanh": (-0.99, 0.99)}
ROUND_TIES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4999998, -0.4, 1e30, 7.0], np.float32)


def _unary(fn, *args, shape=(2, 3, 4), dtype=np.float32):
    def make(ops):
        x = param(ops, list(shape), dtype)
        return [(getattr(ops, fn)(x, *args), "y")], [x]
    return make


def _selu(ops):
    x = param(ops, [2, 3, 4])
    return [(ops.selu(x, const(ops, [1.6732632], np.float32), const(ops, [1.0507010], np.float32)), "y")], [x]


def _uniform(lo, hi, shape=(2, 3, 4)):
    return lambda rng: {"x": rng.uniform(lo, hi, shape).astype(np.float32)}


def _shuffle(shape, axis, group, dtype=np.float32):
    def make(ops):
        x = param(ops, shape, dtype)
        return [(ops.shuffle_channels(x, axis, group), "y")], [x]
    return make


def _topk(version, mode, sort, itype=None):
    def make(ops):
        import importlib

        mod = importlib.import_module(f"openvino.{version}")
        x = param(ops, [3, 6])
        extra = (itype,) if itype else ()
        t = mod.topk(x, const(ops, 3, np.int32 if version == "opset3" else np.int64), 1, mode, sort, *extra)
        return [(t.output(0), "values"), (t.output(1), "indices")], [x]
    return make


def _no_ties(rng):
    return {"x": rng.permutation(18).reshape(3, 6).astype(np.float32)}


def _half_away(v):
    return np.where(np.abs(v - np.trunc(v)) == 0.5, np.trunc(v) + np.sign(v), np.round(v))


CASES = [
    Case("hsigmoid/f32", ("HSigmoid", "opset5"), ov_build(_unary("hsigmoid")), exact=False, inputs=_uniform(-5, 5),
         expect={"y": lambda f: np.clip(f["x"].astype(np.float64) + 3, 0, 6) / 6}),
    Case("softsign/f32", ("SoftSign", "opset9"), ov_build(_unary("softsign")), exact=False, inputs=_uniform(-9, 9),
         expect={"y": lambda f: f["x"] / (1 + np.abs(f["x"].astype(np.float64)))}),
    Case("selu/constant-alpha-lambda", ("Selu", "opset1"), ov_build(_selu), exact=False, inputs=_uniform(-4, 4)),
    Case("sign/f32-zeros-nan", ("Sign", "opset1"), ov_build(_unary("sign", shape=(6,))),
         inputs={"x": np.array([-3.5, -0.0, 0.0, 2.0, np.nan, -np.inf], np.float32)},
         expect={"y": np.array([-1, 0, 0, 1, np.nan, -1], np.float32)}),
    Case("sign/i32", ("Sign", "opset1"), ov_build(_unary("sign", shape=(2, 3), dtype=np.int32)),
         expect={"y": lambda f: np.sign(f["x"])}),
    Case("round/half-to-even-ties", ("Round", "opset5"), ov_build(_unary("round", "half_to_even", shape=(10,))),
         inputs={"x": ROUND_TIES}, expect={"y": lambda f: np.round(f["x"])}),
    Case("round/half-away-from-zero-ties", ("Round", "opset5"),
         ov_build(_unary("round", "half_away_from_zero", shape=(10,))),
         inputs={"x": ROUND_TIES}, expect={"y": lambda f: _half_away(f["x"])}),
    Case("round/half-away-from-zero-edges", ("Round", "opset5"),
         ov_build(_unary("round", "half_away_from_zero", shape=(3,))),
         inputs={"x": np.array([0.49999997, 8388609, -16777215], np.float32)},
         expect={"y": np.array([0, 8388609, -16777215], np.float32)},
         openvino_deviates="OpenVINO's CPU plugin computes sign(x) * floor(|x| + 0.5) in f32: "
                           "0.49999997 -> 1 and odd integers in [2^23, 2^24) -> one off"),
    Case("shufflechannels/spec-example", ("ShuffleChannels", "opset1"), ov_build(_shuffle([1, 6, 2, 2], 1, 3)),
         inputs={"x": np.arange(24, dtype=np.float32).reshape(1, 6, 2, 2)},
         expect={"y": lambda f: f["x"][:, [0, 2, 4, 1, 3, 5]]},
         source="ShuffleChannels-1: [1, 6, 2, 2], axis 1, group 3"),
    Case("shufflechannels/i8-negative-axis-dynamic", ("ShuffleChannels", "opset1"),
         ov_build(_shuffle([None, 3, 8], -1, 4, np.int8)), shapes={"x": (2, 3, 8)},
         expect={"y": lambda f: f["x"][..., [0, 2, 4, 6, 1, 3, 5, 7]]}),
    Case("topk1/max-value", ("TopK", "opset1"), ov_build(_topk("opset1", "max", "value")), inputs=_no_ties,
         expect={"values": lambda f: -np.sort(-f["x"], axis=1)[:, :3]}),
    Case("topk1/min-index", ("TopK", "opset1"), ov_build(_topk("opset1", "min", "index")), inputs=_no_ties,
         expect={"indices": lambda f: np.sort(np.argsort(f["x"], axis=1)[:, :3], axis=1).astype(np.int32)}),
    Case("topk3/max-index-i64", ("TopK", "opset3"), ov_build(_topk("opset3", "max", "index", "i64")),
         inputs=_no_ties, expect={"indices": lambda f: np.sort(np.argsort(-f["x"], axis=1)[:, :3], axis=1)}),
    Case("topk3/min-value", ("TopK", "opset3"), ov_build(_topk("opset3", "min", "value")), inputs=_no_ties,
         expect={"values": lambda f: np.sort(f["x"], axis=1)[:, :3]}),
]

for _type, (_lo, _hi) in TRIG_RANGES.items():
    _version = "opset4" if _type in ("Asinh", "Acosh", "Atanh") else "opset1"
    CASES.append(Case(f"{_type.lower()}/f32", (_type, _version), ov_build(_unary(_type.lower())), exact=False,
                      inputs=_uniform(_lo, _hi), expect={"y": lambda f, fn=_type.lower(): getattr(
                          np, {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
                               "acosh": "arccosh", "atanh": "arctanh"}.get(fn, fn))(f["x"].astype(np.float64))}))
