"""The input checks the ROI pooling families share (ROIPooling, PSROIPooling,
DeformablePSROIPooling): a float feature map ``[N, C, H, W]`` and ROIs ``[num_rois, 5]``
(batch index, x1, y1, x2, y2)."""
from __future__ import annotations

from ...errors import InvalidLayer, UnsupportedLayer


def check_map_and_rois(layer, data, rois, extra=(), why: str = "f16 and f32 only") -> None:
    """Refuse element types other than f16/f32 (``why`` says what the lowering takes) for the
    map, the ROIs and ``extra`` ((value or None, name) pairs), and wrong ranks or ROI widths."""
    for v, what in ((data, "input"), (rois, "coords"), *extra):
        if v is not None and (v.etype is None or v.etype.name not in ("f16", "f32")):
            raise UnsupportedLayer(layer, f"{what} of type {v.etype.name if v.etype else '?'} is not supported ({why})")
    if data.rank not in (None, 4):
        raise InvalidLayer(layer, f"input must be 4-D [N, C, H, W], got rank {data.rank}")
    if rois.shape is not None and (len(rois.shape) != 2 or rois.shape[1] not in (None, 5)):
        raise InvalidLayer(layer, f"coords must be [num_rois, 5], got {list(rois.shape)}")
