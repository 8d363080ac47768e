"""Selftest cases of TopK-1/-3/-11. All are compared bit for bit with the oracle."""
from __future__ import annotations

import importlib

import numpy as np

from .cases import Case, const, ov_build, param


def _topk11(mode, sort, itype="i32"):
    def make(ops):
        import openvino.opset11 as o11

        x = param(ops, [3, 5])
        t = o11.topk(x, const(ops, 2), 1, mode, sort, itype)
        return [(t.output(0), "values"), (t.output(1), "indices")], [x]
    return make


TOPK = ("TopK", "opset11")


def _topk(version, mode, sort, itype=None):
    def make(ops):
        mod = importlib.import_module(f"openvino.{version}")
        x = param(ops, [3, 6])
        extra = (itype,) if itype else ()
        t = mod.topk(x, const(ops, 3, np.int32 if version == "opset3" else np.int64), 1, mode, sort, *extra)
        return [(t.output(0), "values"), (t.output(1), "indices")], [x]
    return make


def _topk_run_time(ops):
    import openvino.opset11 as o11

    x, k = param(ops, [3, None]), param(ops, [], np.int64, "k")
    t = o11.topk(x, k, 1, "max", "value", "i64")
    return [(t.output(0), "values"), (t.output(1), "indices")], [x, k]


def _no_ties(rng):
    return {"x": rng.permutation(18).reshape(3, 6).astype(np.float32)}


CASES = [
    Case("topk/max-value", TOPK, ov_build(_topk11("max", "value")),
         inputs=lambda rng: {"x": rng.permutation(15).reshape(3, 5).astype(np.float32)},
         expect={"values": lambda f: -np.sort(-f["x"], axis=1)[:, :2]}),
    Case("topk/min-index-i64", TOPK, ov_build(_topk11("min", "index", "i64")),
         inputs=lambda rng: {"x": rng.permutation(15).reshape(3, 5).astype(np.float32)},
         expect={"indices": lambda f: np.sort(np.argsort(f["x"], axis=1)[:, :2], axis=1)}),
    Case("topk1/max-value", ("TopK", "opset1"), ov_build(_topk("opset1", "max", "value")), inputs=_no_ties,
         expect={"values": lambda f: -np.sort(-f["x"], axis=1)[:, :3]}),
    Case("topk1/min-index", ("TopK", "opset1"), ov_build(_topk("opset1", "min", "index")), inputs=_no_ties,
         expect={"indices": lambda f: np.sort(np.argsort(f["x"], axis=1)[:, :3], axis=1).astype(np.int32)}),
    Case("topk3/max-index-i64", ("TopK", "opset3"), ov_build(_topk("opset3", "max", "index", "i64")),
         inputs=_no_ties, expect={"indices": lambda f: np.sort(np.argsort(-f["x"], axis=1)[:, :3], axis=1)}),
    Case("topk3/min-value", ("TopK", "opset3"), ov_build(_topk("opset3", "min", "value")), inputs=_no_ties,
         expect={"values": lambda f: np.sort(f["x"], axis=1)[:, :3]}),
    Case("topk/run-time-k", TOPK, ov_build(_topk_run_time),
         inputs=lambda rng: {"x": rng.permutation(21).reshape(3, 7).astype(np.float32), "k": np.array(4)},
         expect={"values": lambda f: -np.sort(-f["x"], axis=1)[:, :4]}, source="k fed at run time"),
]
