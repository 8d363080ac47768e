"""The per-cell list of PriorBox boxes, worked out from the attributes alone (beside
ops/prior_box.py, which applies it to the grid of cells).

For each prior ``p`` of a cell: the centre shift ``((c - sub[p]) + add[p]) + dx[p]`` (``dy`` in y;
all zero for the min_size boxes, whose centre is the cell's), the half sizes of a fixed-size box
(``fixed_w``/``fixed_h``) or, for a min-size box, the index of its min size, ``root`` (sqrt of
its ratio, 1 for the square), ``is_max`` (the ``sqrt(min * max) / 2`` box) and ``max_size``;
``one_sided`` marks the fixed-size boxes, clipped at 0 and 1 on their own.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidLayer, UnsupportedLayer

F32 = np.float32


@dataclass
class PriorTable:
    count: int
    sub: np.ndarray
    add: np.ndarray
    dx: np.ndarray
    dy: np.ndarray
    fixed_w: np.ndarray
    fixed_h: np.ndarray
    uses_min: np.ndarray
    min_index: np.ndarray
    root: np.ndarray
    is_max: np.ndarray
    max_size: np.ndarray
    one_sided: np.ndarray


def aspect_ratios(ratios, flip) -> list:
    """1, then every ratio not within 1e-6 of one listed before (and its reciprocal if ``flip``)."""
    out = [F32(1)]
    for r in (F32(v) for v in ratios):
        if any(abs(float(r) - float(e)) < 1e-6 for e in out):
            continue
        out.append(r)
        if flip:
            out.append(F32(F32(1) / r))
    return out


def declared_count(a) -> int:
    """OpenVINO's number of priors per cell (the output size it declares)."""
    unique = {1.0}
    for r in a["aspect_ratio"]:
        unique.add(round(float(F32(r)) * 1e6) / 1e6)
        if a["flip"]:
            unique.add(round(float(F32(1) / F32(r)) * 1e6) / 1e6)
    total = len({float(F32(u)) for u in unique})
    n = total * len(a["min_size"]) + len(a["max_size"]) if a["scale_all_sizes"] else \
        total + len(a["min_size"]) - 1
    if a["fixed_size"]:
        n = total * len(a["fixed_size"])
    for d in a["density"]:
        n += (len(a["fixed_ratio"]) if a["fixed_ratio"] else total) * (int(d) * int(d) - 1)
    return n


def prior_table(layer, a, min_max_first: bool) -> PriorTable:
    ratios = aspect_ratios(a["aspect_ratio"], a["flip"])
    rows = []  # (sub, add, dx, dy, fixed_w, fixed_h, uses_min, min_index, root, is_max, max, one_sided)
    fixed, density, fixed_ratio = a["fixed_size"], a["density"], a["fixed_ratio"]
    if fixed and len(density) < len(fixed):
        raise UnsupportedLayer(layer, f"{len(fixed)} fixed_size values need as many density values, "
                                      f"got {len(density)}")
    for s, size in enumerate(fixed):
        size = F32(size)
        whole = int(size)  # the reference truncates the fixed size to an integer here
        d = int(F32(density[s]))
        if d <= 0:
            raise InvalidLayer(layer, f"density values must be >= 1, got {density[s]}")
        shift = int(size / F32(d))

        def boxes(half_w, half_h):
            for r in range(d):
                for c in range(d):
                    rows.append((F32(whole // 2), F32(shift / 2), F32(c * shift), F32(r * shift),
                                 half_w, half_h, False, 0, F32(1), False, F32(0), True))

        if fixed_ratio:
            for ar in fixed_ratio:
                root = np.sqrt(F32(ar))
                boxes(F32(F32(size * F32(0.5)) * root), F32(F32(size * F32(0.5)) / root))
        else:
            if density:
                boxes(F32(F32(whole) * F32(0.5)), F32(F32(whole) * F32(0.5)))
            for ar in ratios:
                if abs(float(ar) - 1.0) < 1e-6:
                    continue
                root = np.sqrt(ar)
                boxes(F32(F32(size * F32(0.5)) * root), F32(F32(size * F32(0.5)) / root))
    mins, maxs = a["min_size"], a["max_size"]

    def min_box(i, root=F32(1), big=False):
        rows.append((F32(0), F32(0), F32(0), F32(0), F32(0), F32(0), True, i, root, big,
                     F32(maxs[i]) if big else F32(0), False))

    for i in range(len(mins)):
        min_box(i)
        ratio_boxes = a["scale_all_sizes"] or i == len(mins) - 1
        s_idx = i if a["scale_all_sizes"] else 0

        def with_ratios():
            for ar in ratios:
                if abs(float(ar) - 1.0) >= 1e-6:
                    min_box(s_idx, np.sqrt(ar))

        if min_max_first:
            if len(maxs) > i:
                min_box(i, big=True)
            if ratio_boxes:
                with_ratios()
        else:
            if ratio_boxes:
                with_ratios()
            if len(maxs) > i:
                min_box(i, big=True)
    if not rows:
        raise InvalidLayer(layer, "no boxes: min_size and fixed_size are both empty")
    if len(rows) != declared_count(a):
        raise UnsupportedLayer(layer, f"these attributes make {len(rows)} boxes per cell, but OpenVINO "
                                      f"declares {declared_count(a)} (its reference writes outside "
                                      "its output for such combinations)")
    cols = list(zip(*rows))
    f = [np.asarray(c, F32) for c in cols]
    return PriorTable(len(rows), f[0], f[1], f[2], f[3], f[4], f[5], np.asarray(cols[6], bool),
                      np.asarray(cols[7], np.int64), f[8], np.asarray(cols[9], bool), f[10],
                      np.asarray(cols[11], bool))
