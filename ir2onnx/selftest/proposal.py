"""Selftest cases of Proposal-1/-4: box decoding is arithmetic (compared within the f32
tolerance), the selection (which rows, their order, the -1 row) must agree."""
from __future__ import annotations

import importlib

import numpy as np

from .cases import Case, ov_build, param

V1, V4 = ("Proposal", "opset1"), ("Proposal", "opset4")
U = np.uint32


def _head(version="opset4", n=2, h=3, w=4, info=4, ratios=(0.5, 1.0, 2.0), scales=(8.0, 16.0), **attrs):
    def make(ops):
        mod = importlib.import_module(f"openvino.{version}")
        k = len(ratios) * len(scales)
        cls, deltas = param(ops, [n, 2 * k, h, w], name="cls"), param(ops, [n, 4 * k, h, w], name="deltas")
        im = param(ops, [info], name="im_info")
        full = dict(dict(base_size=U(16), pre_nms_topn=U(30), post_nms_topn=U(6), nms_thresh=0.7, feat_stride=U(16),
                         min_size=U(4), ratio=list(ratios), scale=list(scales)), **attrs)
        node = mod.proposal(cls, deltas, im, full)
        outs = [(node.output(0), "rois")] + ([(node.output(1), "scores")] if version == "opset4" else [])
        return outs, [cls, deltas, im]
    return make


def _feeds(n=2, h=3, w=4, k=6, info=(60.0, 70.0, 1.0, 1.5)):
    def feeds(rng):
        return {"cls": rng.uniform(0, 1, (n, 2 * k, h, w)).astype(np.float32),
                "deltas": rng.normal(0, 0.3, (n, 4 * k, h, w)).astype(np.float32),
                "im_info": np.array(info, np.float32)}
    return feeds


CASES = [
    Case("proposal/caffe", V4, ov_build(_head()), inputs=_feeds(), exact=False),
    Case("proposal/tensorflow", V4, ov_build(_head(framework="tensorflow", clip_after_nms=True)),
         inputs=_feeds(), exact=False),
    Case("proposal/normalize-no-clip-scales", V4,
         ov_build(_head(clip_before_nms=False, normalize=True, box_size_scale=2.0, box_coordinate_scale=5.0)),
         inputs=_feeds(), exact=False),
    Case("proposal/opset1-im-info-3-min-size", V1, ov_build(_head("opset1", info=3, min_size=U(20),
                                                                   post_nms_topn=U(20))),
         inputs=_feeds(info=(60.0, 70.0, 1.0)), exact=False),
    Case("proposal/padding", V4, ov_build(_head(post_nms_topn=U(40))), inputs=_feeds(), exact=False,
         openvino_deviates="OpenVINO's CPU plugin leaves the scores of the padding rows unwritten"),
]
