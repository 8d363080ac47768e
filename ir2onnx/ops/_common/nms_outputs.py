"""The three outputs MatrixNms-8 and MulticlassNms-8/-9 share: ``selected_outputs`` rows
``[class, score, x1, y1, x2, y2]`` in the output's float type, ``selected_indices`` ``[N, 1]`` and
``valid_outputs`` (the rows per image), both in the ``output_type`` attribute's integer type."""
from __future__ import annotations

from onnx import TensorProto

from ...ir.element_types import element_type
from ...lowering.builder import Value
from .indices import output_type
from .shapes import i64


def nms_outputs(g, layer, classes, scores, coords, index, counts, float_type) -> list[Value]:
    """``classes`` and ``scores`` [N], ``coords`` [N, 4], ``index`` [N] (i64) and ``counts``
    [batch] (i64) as the layer's outputs; ``float_type``: the rows' type when the IR leaves the
    output port untyped (the boxes' or scores' type)."""
    rows = g.Concat(g.Unsqueeze(g.Cast(classes, to=TensorProto.FLOAT), i64(g, [1])),
                    g.Unsqueeze(scores, i64(g, [1])), coords, axis=1)
    out_float = layer.outputs[0].etype or float_type
    if out_float.name != "f32":
        rows = g.Cast(rows, to=out_float.onnx)
    index = g.Unsqueeze(index, i64(g, [1]))
    itype = output_type(layer)
    if itype == "i32":
        index, counts = g.Cast(index, to=TensorProto.INT32), g.Cast(counts, to=TensorProto.INT32)
    it = element_type(itype)
    return [Value(g, out_float, (None, 6), name=rows), Value(g, it, (None, 1), name=index),
            Value(g, it, (None,), name=counts)]
