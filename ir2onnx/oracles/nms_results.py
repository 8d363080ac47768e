"""What the oracles of MatrixNms-8 and MulticlassNms-8/-9 share, from their common spec text: the
order of the selected rows across the batch (``sort_result_across_batch``) and the integer type of
the index outputs (``output_type``)."""
from __future__ import annotations

import numpy as np


def sort_across_batch(rows: list[tuple], attrs: dict) -> None:
    """Sort ``rows`` of ``(batch, class, box, score)`` in place when ``sort_result_across_batch``:
    by score (descending), then batch, class, box; or by class, then batch, score (descending),
    box. Otherwise each image's rows keep their order."""
    if not attrs["sort_result_across_batch"]:
        return
    if attrs["sort_result_type"] == "score":
        rows.sort(key=lambda r: (-r[3], r[0], r[1], r[2]))
    elif attrs["sort_result_type"] == "classid":
        rows.sort(key=lambda r: (r[1], r[0], -r[3], r[2]))


def index_type(attrs: dict):
    """np.int32 or np.int64, as the ``output_type`` attribute says."""
    return np.int32 if getattr(attrs["output_type"], "name", attrs["output_type"]) == "i32" else np.int64
