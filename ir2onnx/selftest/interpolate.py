"""Selftest cases of Interpolate-1/-4/-11. Exact cases (data movement, integer and boolean results) are
compared bit for bit, the others within the per-type tolerances of :mod:`ir2onnx.harness.compare`."""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param


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


def _interp1(mode, target, **attrs):
    def make(ops):
        import openvino.opset1 as o1

        x = param(ops, [1, 2, 3, 4])
        a = dict(axes=[2, 3], mode=mode, align_corners=False, antialias=False, pads_begin=[0], pads_end=[0])
        a.update(attrs)
        return [(o1.interpolate(x, const(ops, target), a), "y")], [x]
    return make


I1, I4, I11 = ("Interpolate", "opset1"), ("Interpolate", "opset4"), ("Interpolate", "opset11")


CASES = [
    Case("interpolate1/nearest-x2", I1, ov_build(_interp1("nearest", [6, 8])),
         expect={"y": lambda f: f["x"].repeat(2, axis=2).repeat(2, axis=3)},
         source="Interpolate-1: Model Optimizer's nearest x2 upsample (face-detection-0105)"),
    Case("interpolate1/linear-align-corners", I1, ov_build(_interp1("linear", [5, 7], align_corners=True)),
         exact=False),
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
]
