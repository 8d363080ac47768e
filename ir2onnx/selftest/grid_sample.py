"""Selftest cases of GridSample-9: each mode with each padding mode, align_corners both ways,
on a grid reaching outside [-1, 1] (within the per-type tolerances; nearest bit for bit). A
worked example: the identity grid with align_corners=True returns the data."""
from __future__ import annotations

import numpy as np

from .cases import Case, ov_build, param

GS = ("GridSample", "opset9")


def _gs(mode, pad, align):
    def make(ops):
        import openvino.opset9 as o9

        x = param(ops, [None, 2, None, None])
        grid = param(ops, [None, None, None, 2], name="grid")
        return [(o9.grid_sample(x, grid, {"align_corners": align, "mode": mode, "padding_mode": pad}), "y")], [x, grid]
    return make


def _feeds(rng):
    return {"x": rng.standard_normal((1, 2, 4, 5)).astype(np.float32),
            "grid": rng.uniform(-1.4, 1.4, (1, 3, 6, 2)).astype(np.float32)}


def _identity(rng):
    ys, xs = np.meshgrid(np.linspace(-1, 1, 4), np.linspace(-1, 1, 5), indexing="ij")
    return {"x": rng.standard_normal((1, 2, 4, 5)).astype(np.float32),
            "grid": np.stack([xs, ys], -1)[None].astype(np.float32)}


CASES = [
    Case(f"grid_sample/{mode}-{pad}-{'corners' if align else 'edges'}", GS, ov_build(_gs(mode, pad, align)),
         inputs=_feeds, exact=mode == "nearest", min_opset=16)
    for mode, pad, align in [("bilinear", "zeros", False), ("bilinear", "reflection", True),
                             ("nearest", "border", False), ("nearest", "reflection", False),
                             ("bicubic", "zeros", True), ("bicubic", "reflection", False)]
] + [
    Case("grid_sample/identity-grid", GS, ov_build(_gs("bilinear", "zeros", True)), inputs=_identity, exact=False,
         min_opset=16, expect={"y": lambda f: f["x"]}),
]
