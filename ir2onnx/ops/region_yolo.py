"""RegionYolo-1 and ReorgYolo-2: the YOLO v2/v3 heads.

RegionYolo facts (OpenVINO's operation specification and reference): the input ``[N, C, H, W]``
holds ``R`` regions of ``E = coords + classes + 1`` entries each (channel ``r * E + e``), where
``R = num`` with ``do_softmax`` (YOLO v2) and ``R = len(mask)`` without (YOLO v3); the lowering
requires ``C == R * E``. Entries 0 and 1 (the box centre) go through the logistic sigmoid,
entries 2 .. coords-1 (the box size) pass unchanged, entry ``coords`` (the objectness) goes
through the sigmoid, and the ``classes`` class scores through the sigmoid (v3) or a softmax over
the classes at each position (v2, computed from the input values). With ``do_softmax`` the output
flattens dims ``axis`` .. ``end_axis`` into one; without it the output is ``[N, R * E, H, W]``
(axis, end_axis and anchors do not change the values). Lowered as Reshape ``[N, R, E, H*W]``,
Split of the entries, Sigmoid / Softmax(axis=2), Concat, Reshape; f16 is computed in f32.

ReorgYolo facts: with stride ``s``, the output ``[N, C*s*s, H/s, W/s]`` is the input read in
Darknet's "reorg" order: viewing the input buffer as ``[N, C/(s*s), H, s, W, s]`` (axes n, k, h,
a, w, b), the output buffer is ``[N, s, s, C/(s*s), H, W]`` holding ``[n, a, b, k, h, w]`` — so
Reshape, Transpose (0, 3, 5, 1, 2, 4), Reshape: bit-exact data movement. C must be a multiple
of ``s*s`` (otherwise OpenVINO's reference reads past its input) and H, W multiples of ``s``.
"""
from __future__ import annotations

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers
from ._common.inputs import known_rank, normalize_axis
from ._common.shapes import dims_of, i64, shape_of

FLOATS = ("f16", "f32", "f64")


def _vector(b, parts):
    """int64 1-D shape vector from ints and 1-element tensor names (a constant if all ints)."""
    if all(isinstance(p, int) for p in parts):
        return i64(b, parts, "shape")
    return b.Concat(*[i64(b, [p]) if isinstance(p, int) else p for p in parts], axis=0)


def _dim(x, b, i):
    d = x.shape[i]
    return d if d is not None else dims_of(b, x, i, i + 1)


@lowers("ReorgYolo", "opset2")
def reorg_yolo(ctx, layer, inputs):
    """ReorgYolo-2 (data) -> Reshape, Transpose, Reshape (Darknet's reorg order)."""
    x = inputs[0]
    if known_rank(layer, x, 4) != 4:
        raise InvalidLayer(layer, "ReorgYolo needs a 4-D input")
    strides = [int(s) for s in layer.attrs["stride"]]
    if not strides or len(set(strides)) != 1 or strides[0] < 1:
        raise InvalidLayer(layer, f"stride must be one positive value (or equal values), got {strides}")
    s, c = strides[0], x.shape[1]
    if c is None:
        raise UnsupportedLayer(layer, "ReorgYolo needs a static channel dim")
    if c % (s * s):
        raise UnsupportedLayer(layer, f"channels {c} are not a multiple of stride*stride = {s * s}")
    for axis in (2, 3):
        if x.shape[axis] is not None and x.shape[axis] % s:
            raise InvalidLayer(layer, f"dim {axis} ({x.shape[axis]}) is not a multiple of the stride {s}")
    b = ctx.b
    n, h, w = _dim(x, b, 0), _dim(x, b, 2), _dim(x, b, 3)
    view = b.Reshape(x, _vector(b, [n, c // (s * s), h, s, w, s]))
    moved = b.Transpose(view, perm=[0, 3, 5, 1, 2, 4])
    sh = [d // s if isinstance(d, int) else b.Div(d, i64(b, [s])) for d in (h, w)]
    return [b.Reshape(moved, _vector(b, [n, c * s * s, *sh]))]


@lowers("RegionYolo", "opset1")
def region_yolo(ctx, layer, inputs):
    """RegionYolo-1 (data) -> Reshape, Split, Sigmoid, Softmax (do_softmax), Concat, Reshape."""
    x = inputs[0]
    a = layer.attrs
    if x.etype is None or x.etype.name not in FLOATS:
        raise UnsupportedLayer(layer, f"RegionYolo on {x.etype.name if x.etype else '?'} is not supported")
    if known_rank(layer, x, 4) != 4:
        raise InvalidLayer(layer, "RegionYolo needs a 4-D input")
    coords, classes, soft = int(a["coords"]), int(a["classes"]), bool(a["do_softmax"])
    regions = int(a["num"]) if soft else len(a["mask"])
    entries = coords + classes + 1
    if coords < 2 or classes < 0 or regions < 1:
        raise InvalidLayer(layer, f"needs coords >= 2, classes >= 0 and regions >= 1 "
                                  f"(coords={coords}, classes={classes}, regions={regions})")
    if x.shape[1] is None or x.shape[1] != regions * entries:
        raise UnsupportedLayer(layer, f"channels must be regions * (coords + classes + 1) = "
                                      f"{regions * entries}, got {x.shape[1]}")
    b = ctx.b
    data = b.Cast(x, to=1) if x.etype.name == "f16" else x
    view = b.Reshape(data, i64(b, [0, regions, entries, -1]))
    sizes = [2, coords - 2, 1, classes] if soft else [2, coords - 2, 1 + classes]
    kept = [s for s in sizes if s]
    parts = iter(b.Split(view, i64(b, kept), axis=2, _outputs=len(kept)) if len(kept) > 1 else [view])
    out = []
    for i, size in enumerate(sizes):
        if not size:
            continue
        part = next(parts)
        if i == 1:
            out.append(part)
        elif i == 3:
            out.append(b.Softmax(part, axis=2))
        else:
            out.append(b.Sigmoid(part))
    y = b.Concat(*out, axis=2)
    if soft:
        start = normalize_axis(layer, int(a["axis"]), 4)
        end = normalize_axis(layer, int(a["end_axis"]), 4, "end_axis")
        if end < start:
            raise InvalidLayer(layer, f"end_axis {end} is before axis {start}")
        target = _vector(b, [_dim(x, b, i) for i in range(start)] + [-1]
                         + [_dim(x, b, i) for i in range(end + 1, 4)])
    else:
        target = shape_of(b, x)
    y = b.Reshape(y, target)
    return [b.Cast(y, to=x.etype.onnx) if x.etype.name == "f16" else y]
