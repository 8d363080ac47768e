"""Selftest cases of the detection / segmentation / super-resolution ops: Interpolate-4/-11,
PReLU, Elu, SoftPlus, Mish, LogSoftmax, TopK, FloorMod, Mod, SquaredDifference, ReduceL1/L2,
NormalizeL2, CumSum, GatherND, ScatterNDUpdate. Data movement (nearest interpolation, TopK,
GatherND, ScatterNDUpdate) and integer results are compared bit for bit; the rest within the
per-type tolerances of :mod:`ir2onnx.compare`."""
from __future__ import annotations

import numpy as np

from .selftest_cases import Case, const, ov_build, param


def _interp4(mode, sizes, scales, calc, **attrs):
    def make(ops):
        from openvino.utils.node_factory import NodeFactory

        x = param(ops, [1, 2, 3, 4])
        a = dict(mode=mode, shape_calculation_mode=calc, coordinate_transformation_mode="half_pixel",
                 nearest_mode="round_prefer_floor", antialias=False, pads_begin=[0], pads_end=[0], cube_coeff=-0.75)
        a.update(attrs)
        ins = [x, const(ops, sizes), const(ops, scales, np.float32), const(ops, [2, 3])]
        return [(NodeFactory("opset4").create("Interpolate", [n.output(0) for n in ins], a), "y")], [x]
    return make


def _interp11(mode, target, calc, shape=(1, 2, 3, 4), **kw):
    def make(ops):
        import openvino.opset11 as o11

        x = param(ops, list(shape))
        t = const(ops, target, np.float32 if calc == "scales" else np.int64)
        return [(o11.interpolate(x, t, mode, calc, axes=const(ops, [2, 3]), **kw), "y")], [x]
    return make


def _interp11_to_skip(ops):
    """FPN's "resize to the other map's size": run-time sizes from ShapeOf of a second input."""
    import openvino.opset11 as o11

    x, skip = param(ops, [1, 2, None, None]), param(ops, [1, 1, None, None], name="skip")
    sizes = ops.gather(ops.shape_of(skip), const(ops, [2, 3]), const(ops, 0))
    return [(o11.interpolate(x, sizes, "linear_onnx", "sizes", axes=const(ops, [2, 3])), "y")], [x, skip]


def _unary(fn, *args, shape=(2, 3, 4)):
    def make(ops):
        x = param(ops, list(shape))
        return [(getattr(ops, fn)(x, *args), "y")], [x]
    return make


def _prelu(ops):
    x = param(ops, [1, 3, 2, 2])
    return [(ops.prelu(x, const(ops, [0.1, -0.5, 2.0], np.float32)), "y")], [x]


def _normal(scale=3.0, shape=(2, 3, 4)):
    return lambda rng: {"x": (rng.standard_normal(shape) * scale).astype(np.float32)}


def _topk(mode, sort, itype="i32"):
    def make(ops):
        import openvino.opset11 as o11

        x = param(ops, [3, 5])
        t = o11.topk(x, const(ops, 2), 1, mode, sort, itype)
        return [(t.output(0), "values"), (t.output(1), "indices")], [x]
    return make


def _binary(fn, dtype=np.float32):
    def make(ops):
        a, b = param(ops, [2, 3], dtype, "a"), param(ops, [3], dtype, "b")
        return [(getattr(ops, fn)(a, b), "y")], [a, b]
    return make


def _mod_inputs(dtype):
    def feeds(rng):
        a = rng.integers(-20, 20, (2, 3)).astype(dtype)
        return {"a": a, "b": np.array([-3, 2, 5], dtype)}
    return feeds


def _reduce(fn, axes, keep):
    def make(ops):
        x = param(ops, [2, 3, 4])
        return [(getattr(ops, fn)(x, const(ops, axes), keep), "y")], [x]
    return make


def _normalize_l2(eps_mode):
    def make(ops):
        from openvino.utils.node_factory import NodeFactory

        x = param(ops, [1, 3, 2, 2])
        node = NodeFactory("opset1").create("NormalizeL2", [x.output(0), const(ops, [1]).output(0)],
                                            {"eps": 1e-6, "eps_mode": eps_mode})
        return [(node, "y")], [x]
    return make


def _cumsum(exclusive, reverse):
    def make(ops):
        x = param(ops, [2, 4], np.int32)
        return [(ops.cumsum(x, const(ops, 1), exclusive, reverse), "y")], [x]
    return make


def _gather_nd(ops):
    import openvino.opset8 as o8

    x = param(ops, [2, 2], np.int32)
    return [(o8.gather_nd(x, const(ops, [[0, 0], [1, 0]])), "y")], [x]


def _gather_nd_batch(ops):
    import openvino.opset8 as o8

    x = param(ops, [2, 3, 4])
    return [(o8.gather_nd(x, const(ops, [[[1], [2]], [[0], [1]]]), 1), "y")], [x]


def _scatter_nd_update(ops):
    import openvino.opset4 as o4

    x = param(ops, [8], np.int32)
    node = o4.scatter_nd_update(x, const(ops, [[4], [3], [1], [7]]), const(ops, [9, 10, 11, 12], np.int32))
    return [(node, "y")], [x]


I4, I11 = ("Interpolate", "opset4"), ("Interpolate", "opset11")
TOPK = ("TopK", "opset11")

CASES = [
    Case("interpolate4/nearest-sizes", I4, ov_build(_interp4("nearest", [6, 7], [1, 1], "sizes",
                                                             nearest_mode="round_prefer_ceil"))),
    Case("interpolate4/linear-onnx-scales-pads", I4,
         ov_build(_interp4("linear_onnx", [1, 1], [2.0, 1.5], "scales", pads_begin=[0, 0, 1, 0],
                           pads_end=[0, 0, 0, 2], coordinate_transformation_mode="align_corners")), exact=False),
    Case("interpolate4/cubic-downsample", I4, ov_build(_interp4("cubic", [2, 3], [1, 1], "sizes")), exact=False),
    Case("interpolate11/nearest-x2-asymmetric-floor", I11,
         ov_build(_interp11("nearest", [2.0, 2.0], "scales", coordinate_transformation_mode="asymmetric",
                            nearest_mode="floor")),
         expect={"y": lambda f: f["x"].repeat(2, axis=2).repeat(2, axis=3)},
         source="Interpolate-11: YOLO-style nearest x2 upsample"),
    Case("interpolate11/linear-pytorch-half-pixel", I11,
         ov_build(_interp11("linear", [5, 9], "sizes", coordinate_transformation_mode="pytorch_half_pixel")),
         exact=False),
    Case("interpolate11/cubic-scales", I11, ov_build(_interp11("cubic", [1.5, 2.0], "scales", cube_coeff=-0.5)),
         exact=False),
    Case("interpolate11/linear-run-time-sizes", I11, ov_build(_interp11_to_skip), exact=False,
         inputs={"x": np.random.default_rng(5).standard_normal((1, 2, 3, 4)).astype(np.float32),
                 "skip": np.zeros((1, 1, 7, 5), np.float32)}, expect={"y": (1, 2, 7, 5)}),
    Case("prelu/per-channel", ("PReLU", "opset1"), ov_build(_prelu), exact=False, inputs=_normal(shape=(1, 3, 2, 2))),
    Case("elu/alpha", ("Elu", "opset1"), ov_build(_unary("elu", 0.7)), exact=False, inputs=_normal(),
         expect={"y": lambda f: np.where(f["x"] > 0, f["x"], 0.7 * np.expm1(f["x"].astype(np.float64)))}),
    Case("softplus/f32", ("SoftPlus", "opset4"), ov_build(_unary("softplus")), exact=False, inputs=_normal(),
         expect={"y": lambda f: np.logaddexp(0, f["x"].astype(np.float64))}),
    Case("mish/f32", ("Mish", "opset4"), ov_build(_unary("mish")), exact=False, inputs=_normal()),
    Case("logsoftmax/last-axis", ("LogSoftmax", "opset5"), ov_build(_unary("log_softmax", -1)), exact=False,
         inputs=_normal()),
    Case("topk/max-value", TOPK, ov_build(_topk("max", "value")),
         inputs=lambda rng: {"x": rng.permutation(15).reshape(3, 5).astype(np.float32)},
         expect={"values": lambda f: -np.sort(-f["x"], axis=1)[:, :2]}),
    Case("topk/min-index-i64", TOPK, ov_build(_topk("min", "index", "i64")),
         inputs=lambda rng: {"x": rng.permutation(15).reshape(3, 5).astype(np.float32)},
         expect={"indices": lambda f: np.sort(np.argsort(f["x"], axis=1)[:, :2], axis=1)}),
    Case("floormod/i32-signs", ("FloorMod", "opset1"), ov_build(_binary("floor_mod", np.int32)),
         inputs=_mod_inputs(np.int32), expect={"y": lambda f: np.mod(f["a"], f["b"])}),
    Case("floormod/f32", ("FloorMod", "opset1"), ov_build(_binary("floor_mod")), exact=False,
         inputs=lambda rng: {"a": rng.uniform(-9, 9, (2, 3)).astype(np.float32),
                             "b": np.array([-2.5, 1.5, 4], np.float32)}),
    Case("mod/i32-signs", ("Mod", "opset1"), ov_build(_binary("mod", np.int32)),
         inputs=_mod_inputs(np.int32), expect={"y": lambda f: np.fmod(f["a"], f["b"])}),
    Case("squareddifference/broadcast", ("SquaredDifference", "opset1"), ov_build(_binary("squared_difference")),
         exact=False, expect={"y": lambda f: (f["a"] - f["b"]) ** 2}),
    Case("reducel2/keep-dims", ("ReduceL2", "opset4"), ov_build(_reduce("reduce_l2", [1, 2], True)), exact=False,
         expect={"y": lambda f: np.sqrt((f["x"].astype(np.float64) ** 2).sum((1, 2), keepdims=True))}),
    Case("reducel1/axis0", ("ReduceL1", "opset4"), ov_build(_reduce("reduce_l1", [0], False)), exact=False,
         expect={"y": lambda f: np.abs(f["x"]).sum(0)}),
    Case("normalizel2/channel-add", ("NormalizeL2", "opset1"), ov_build(_normalize_l2("add")), exact=False),
    Case("normalizel2/channel-max", ("NormalizeL2", "opset1"), ov_build(_normalize_l2("max")), exact=False),
    Case("cumsum/exclusive-reverse", ("CumSum", "opset3"), ov_build(_cumsum(True, True)),
         inputs={"x": np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.int32)},
         expect={"y": np.array([[9, 7, 4, 0], [21, 15, 8, 0]], np.int32)}),
    Case("cumsum/inclusive", ("CumSum", "opset3"), ov_build(_cumsum(False, False)),
         expect={"y": lambda f: np.cumsum(f["x"], 1, dtype=np.int32)}),
    Case("gathernd8/spec-example", ("GatherND", "opset8"), ov_build(_gather_nd),
         inputs={"x": np.array([[1, 2], [3, 4]], np.int32)}, expect={"y": np.array([1, 3], np.int32)},
         source="GatherND-8: data [[1, 2], [3, 4]], indices [[0, 0], [1, 0]]"),
    Case("gathernd8/batch-dims-1", ("GatherND", "opset8"), ov_build(_gather_nd_batch),
         expect={"y": lambda f: np.stack([f["x"][0, [1, 2]], f["x"][1, [0, 1]]])}),
    Case("scatterndupdate/spec-example", ("ScatterNDUpdate", "opset4"), ov_build(_scatter_nd_update),
         inputs={"x": np.arange(1, 9, dtype=np.int32)}, expect={"y": np.array([1, 11, 3, 10, 9, 6, 7, 12], np.int32)},
         source="ScatterNDUpdate-3: data [1..8], indices [[4], [3], [1], [7]], updates [9, 10, 11, 12]"),
]
