"""Selftest cases of ExperimentalDetectronPriorGridGenerator-6 (priors a Parameter, the feature
map and the image Parameters whose sizes only are used, as in the Detectron heads) and
ExperimentalDetectronTopKROIs-6 (rois and probabilities Parameters, N >= max_rois)."""
from __future__ import annotations

import numpy as np

from .cases import Case, ov_build, param


def _grid(attrs, fm=(1, 4, 3, 2), image=(1, 3, 24, 20), n=3):
    def make(ops):
        from openvino.utils.node_factory import NodeFactory

        pr, x, img = param(ops, [n, 4], name="priors"), param(ops, list(fm), name="fm"), \
            param(ops, list(image), name="img")
        node = NodeFactory("opset6").create("ExperimentalDetectronPriorGridGenerator",
                                            [pr.output(0), x.output(0), img.output(0)], attrs)
        return [(node, "rois")], [pr, x, img]
    return make


BASE = dict(flatten=True, h=0, w=0, stride_x=0.0, stride_y=0.0)
ONE = {"priors": np.array([[-2.0, -1.0, 2.0, 1.0]], np.float32)}


def _one_cell(feeds):
    """A 1x1 map on a 16x8 image: step 8 (x) and 16 (y), centre (4, 8)."""
    return np.array([[2.0, 7.0, 6.0, 9.0]], np.float32)


def _topk(max_rois, n=10):
    def make(ops):
        from openvino.utils.node_factory import NodeFactory

        rois, probs = param(ops, [n, 4], name="rois"), param(ops, [None], name="probs")
        node = NodeFactory("opset6").create("ExperimentalDetectronTopKROIs", [rois.output(0), probs.output(0)],
                                            {"max_rois": max_rois})
        return [(node, "top")], [rois, probs]
    return make


TOPK_IN = {"rois": np.arange(16, dtype=np.float32).reshape(4, 4),
           "probs": np.array([0.2, 0.9, 0.1, 0.5], np.float32)}


CASES = [
    Case("topk_rois/random", ("ExperimentalDetectronTopKROIs", "opset6"), ov_build(_topk(4)),
         shapes={"probs": (10,)}),
    Case("topk_rois/worked", ("ExperimentalDetectronTopKROIs", "opset6"), ov_build(_topk(2, n=4)),
         inputs=TOPK_IN, expect={"top": np.array([[4, 5, 6, 7], [12, 13, 14, 15]], np.float32)}),
    Case("prior_grid/default-steps", ("ExperimentalDetectronPriorGridGenerator", "opset6"),
         ov_build(_grid(BASE)), exact=False),
    Case("prior_grid/strides-4d", ("ExperimentalDetectronPriorGridGenerator", "opset6"),
         ov_build(_grid(dict(BASE, flatten=False, stride_x=4.0, stride_y=8.0))), exact=False),
    Case("prior_grid/one-cell", ("ExperimentalDetectronPriorGridGenerator", "opset6"),
         ov_build(_grid(BASE, fm=(1, 2, 1, 1), image=(1, 3, 16, 8), n=1)), inputs=ONE, exact=False,
         expect={"rois": _one_cell}),
]
