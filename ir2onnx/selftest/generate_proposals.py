"""Selftest cases of GenerateProposals-9: a batch-2 RPN of 3 anchors on a 4x5 map (pixel and
normalized coordinates), and worked cases: an anchor given back by zero deltas, a small box that
takes a pre_nms_count place and is then dropped, boxes half a pixel apart that stay apart."""
from __future__ import annotations

import numpy as np

from .cases import Case, ov_build, param

OP = ("GenerateProposals", "opset9")


def _rpn(attrs, info=3):
    def make(ops):
        import openvino.opset9 as o9

        ins = [param(ops, [None, info], name="im_info"), param(ops, [None, None, None, 4], name="anchors"),
               param(ops, [None, None, None, None], name="deltas"), param(ops, [None, None, None, None], name="scores")]
        node = o9.generate_proposals(*ins, **attrs)
        return [(node.output(0), "rois"), (node.output(1), "roi_scores"), (node.output(2), "rois_num")], ins
    return make


def _rpn_inputs(scale=1.0, info=3):
    def inputs(rng, n=2, a=3, h=4, w=5):
        """Anchors of sides 8, 16, 24 centred on a stride-8 grid; small deltas; distinct scores."""
        ys, xs = np.meshgrid(np.arange(h) * 8 + 4, np.arange(w) * 8 + 4, indexing="ij")
        half = np.float32([4, 8, 12])[:, None]
        ctr = np.stack([xs, ys], -1).reshape(h, w, 1, 2).astype(np.float32)
        anchors = np.concatenate([ctr - half, ctr + half], -1) * np.float32(scale)
        im = np.float32([[30, 38, 1, 1.5], [26, 40, 0.5, 1]])[:, :info] * np.float32([scale, scale, 1, 1][:info])
        p = a * h * w
        scores = np.stack([rng.permutation(p) for _ in range(n)]).astype(np.float32) / np.float32(p) + np.float32(0.01)
        return {"im_info": im, "anchors": anchors.astype(np.float32),
                "deltas": (rng.standard_normal((n, a * 4, h, w)) * 0.3).astype(np.float32),
                "scores": scores.reshape(n, a, h, w)}
    return inputs


RPN = dict(min_size=4.0, nms_threshold=0.5, pre_nms_count=40, post_nms_count=12, normalized=False)
NORM = dict(RPN, min_size=0.1, normalized=True, roi_num_type="i32")


def _boxes(anchors, scores, image=(20, 20)):
    """Inputs of one image, 1 x W map of one anchor each, zero deltas (the anchors come back)."""
    w = len(anchors)
    return {"im_info": np.float32([[image[0], image[1], 1]]), "anchors": np.float32(anchors).reshape(1, w, 1, 4),
            "deltas": np.zeros((1, 4, 1, w), np.float32), "scores": np.float32(scores).reshape(1, 1, 1, w)}


# zero deltas: width 9 - 2 + 1 = 8 around centre 6 gives the anchor back
ONE = _boxes([[2, 2, 9, 9]], [0.75])
# the best box is 1 pixel wide (below min_size 2): it takes one of the 2 pre_nms_count places
SMALL = _boxes([[1, 1, 1, 9], [4, 4, 12, 12], [3, 3, 11, 11]], [0.9, 0.8, 0.7])
# 1-pixel-wide boxes half a pixel apart do not touch (x0' > x1): both kept at nms_threshold 0.3
GAP = _boxes([[2, 2, 2, 12], [2.5, 2, 2.5, 12]], [0.9, 0.8])

CASES = [
    Case("generate_proposals/rpn", OP, ov_build(_rpn(RPN)), inputs=_rpn_inputs(), exact=False),
    Case("generate_proposals/rpn-scale-hw", OP, ov_build(_rpn(RPN, info=4)), inputs=_rpn_inputs(info=4),
         exact=False),
    Case("generate_proposals/normalized", OP, ov_build(_rpn(NORM)), inputs=_rpn_inputs(scale=1 / 64), exact=False),
    Case("generate_proposals/one-anchor", OP, ov_build(_rpn(RPN)), inputs=ONE, exact=False,
         expect={"rois": np.float32([[2, 2, 9, 9]]), "roi_scores": np.float32([0.75]), "rois_num": np.int64([1])}),
    Case("generate_proposals/small-box-takes-a-place", OP,
         ov_build(_rpn(dict(RPN, min_size=2.0, pre_nms_count=2, nms_threshold=0.9))), inputs=SMALL, exact=False,
         expect={"rois": np.float32([[4, 4, 12, 12]]), "roi_scores": np.float32([0.8]), "rois_num": np.int64([1])}),
    Case("generate_proposals/half-pixel-apart", OP, ov_build(_rpn(dict(RPN, min_size=0.0, nms_threshold=0.3))),
         inputs=GAP, exact=False,
         expect={"rois": np.float32([[2, 2, 2, 12], [2.5, 2, 2.5, 12]]), "roi_scores": np.float32([0.9, 0.8]),
                 "rois_num": np.int64([2])}),
]
