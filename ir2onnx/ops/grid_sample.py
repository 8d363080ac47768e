"""GridSample-9: sample 4-D data at normalised grid positions -> ONNX GridSample.

GridSample-9 (data[N, C, H, W], grid[N, Ho, Wo, 2] of (x, y) in [-1, 1]) -> GridSample-16
(mode bilinear/nearest/bicubic) or, at opset >= 20, GridSample-20 (linear/nearest/cubic); the
attributes map one to one (align_corners, padding_mode zeros/border/reflection). Every one of the
18 combinations matches torch.nn.functional.grid_sample (what OpenVINO's PyTorch and ONNX
frontends write this op for) within 2e-6 on onnxruntime. f16 data and grids are computed in f32
(Cast, exact) and cast back; f64 needs opset 20 (onnxruntime's GridSample-16 is f32 only).
Integer data is refused: interpolated values have no rounding rule in the spec.
"""
from __future__ import annotations

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers

MODES_20 = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}
FLOAT, DOUBLE = 1, 11


@lowers("GridSample", "opset9")
def grid_sample9(ctx, layer, inputs):
    """GridSample-9 (data, grid) -> GridSample-16/-20 (Cast around it for f16 and mixed types)."""
    data, grid = inputs
    for v, what in ((data, "data"), (grid, "grid")):
        name = v.etype.name if v.etype else "?"
        if name not in ("f16", "f32", "f64"):
            raise UnsupportedLayer(layer, f"{what} of type {name} is not supported (f16, f32, f64)")
    for v, what, rank in ((data, "data", 4), (grid, "grid", 4)):
        if v.rank is not None and v.rank != rank:
            raise InvalidLayer(layer, f"{what} must be 4-D, got rank {v.rank}")
    if grid.shape is not None and grid.shape[-1] not in (None, 2):
        raise InvalidLayer(layer, f"the last dim of grid must be 2, got {grid.shape[-1]}")
    ctx.require_opset(layer, 16, "GridSample")
    wide = "f64" in (data.etype.name, grid.etype.name)
    if wide:
        ctx.require_opset(layer, 20, "GridSample on f64 (onnxruntime's GridSample-16 is f32 only)")
    to = DOUBLE if wide else FLOAT
    g = ctx.b
    x = data.name if data.etype.onnx == to else g.Cast(data, to=to)
    xy = grid.name if grid.etype.onnx == to else g.Cast(grid, to=to)
    mode = layer.attrs["mode"]
    y = g.GridSample(x, xy, mode=MODES_20[mode] if ctx.opset >= 20 else mode,
                     padding_mode=layer.attrs["padding_mode"], align_corners=int(bool(layer.attrs["align_corners"])))
    return [y if data.etype.onnx == to else g.Cast(y, to=data.etype.onnx)]
