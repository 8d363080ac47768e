"""The ROIAlign-style bilinear sample the ROI oracles share (ROIAlign-3/-9, ROIAlignRotated-15,
ExperimentalDetectronROIFeatureExtractor-6): written from the specifications, not the lowerings."""
from __future__ import annotations

import numpy as np


def bilinear(fmap: np.ndarray, y, x, ftype=np.float64):
    """The value of ``fmap`` ([..., H, W]) at (y, x): 0 outside [-1, H] x [-1, W]; else (y, x)
    clamped below at 0, and a coordinate at or past the last row / column reads that row /
    column; the four neighbours weighted with ``ftype`` arithmetic (f64, or Detectron's f32)."""
    height, width = fmap.shape[-2:]
    if y < -1 or y > height or x < -1 or x > width:
        return np.zeros(fmap.shape[:-2], ftype)
    y, x = max(ftype(y), ftype(0)), max(ftype(x), ftype(0))
    y0, x0 = int(y), int(x)
    if y0 >= height - 1:
        y0 = y1 = height - 1
        y = ftype(y0)
    else:
        y1 = y0 + 1
    if x0 >= width - 1:
        x0 = x1 = width - 1
        x = ftype(x0)
    else:
        x1 = x0 + 1
    ly, lx = ftype(y - ftype(y0)), ftype(x - ftype(x0))
    hy, hx = ftype(1) - ly, ftype(1) - lx
    return (hy * hx * fmap[..., y0, x0] + hy * lx * fmap[..., y0, x1] + ly * hx * fmap[..., y1, x0]
            + ly * lx * fmap[..., y1, x1]).astype(ftype)
