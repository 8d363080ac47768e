"""Selftest cases of PriorBox-1/-8 and PriorBoxClustered-1: the sizes are ShapeOf of a feature
map and of the image, sliced, as in SSD heads; the boxes fold to a constant."""
from __future__ import annotations

import importlib

import numpy as np

from .cases import Case, const, ov_build, param


def _hw(ops, node):
    return ops.strided_slice(ops.shape_of(node), const(ops, [2]), const(ops, [4]), const(ops, [1]), [0], [0])


def _head(version, fn, attrs, fm=(1, 8, 3, 2), image=(1, 3, 30, 20)):
    def make(ops):
        mod = importlib.import_module(f"openvino.{version}")
        x, img = param(ops, list(fm), name="x"), param(ops, list(image), name="img")
        return [(getattr(mod, fn)(_hw(ops, x), _hw(ops, img), attrs), "priors")], [x, img]
    return make


PB = dict(min_size=[4.0, 6.0], max_size=[9.0, 12.0], aspect_ratio=[2.0, 3.0], flip=True, clip=False,
          step=0.0, offset=0.5, variance=[0.1, 0.1, 0.2, 0.2], scale_all_sizes=True)
PBC = dict(width=[4.0, 6.0], height=[5.0, 7.0], clip=True, step=0.0, step_w=0.0, step_h=0.0, offset=0.5,
           variance=[0.1, 0.2, 0.3, 0.4])


def _one_box(f):
    """PriorBox of a 1x1 map, one min size 10 on a 20x20 image: centre 10, half size 5."""
    return np.array([[0.25, 0.25, 0.75, 0.75], [0.1, 0.1, 0.2, 0.2]], np.float32)


CASES = [
    Case("prior_box1/min-max-ratios", ("PriorBox", "opset1"), ov_build(_head("opset1", "prior_box", PB)),
         exact=False),
    Case("prior_box8/ratios-before-max", ("PriorBox", "opset8"),
         ov_build(_head("opset8", "prior_box", dict(PB, min_max_aspect_ratios_order=False, step=8.0,
                                                    clip=True))), exact=False),
    Case("prior_box8/fixed-size-density", ("PriorBox", "opset8"),
         ov_build(_head("opset8", "prior_box", dict(PB, min_size=[], max_size=[], fixed_size=[8.0],
                                                    density=[2.0], aspect_ratio=[2.0], flip=False))),
         exact=False),
    Case("prior_box8/one-box", ("PriorBox", "opset8"),
         ov_build(_head("opset8", "prior_box", dict(PB, min_size=[10.0], max_size=[], aspect_ratio=[]),
                        fm=(1, 8, 1, 1), image=(1, 3, 20, 20))),
         exact=False, expect={"priors": _one_box}),
    Case("prior_box_clustered/clip", ("PriorBoxClustered", "opset1"),
         ov_build(_head("opset1", "prior_box_clustered", PBC)), exact=False),
    Case("prior_box_clustered/steps", ("PriorBoxClustered", "opset1"),
         ov_build(_head("opset1", "prior_box_clustered", dict(PBC, clip=False, step_w=3.0, step_h=4.0,
                                                                variance=[0.5]))), exact=False),
]
