"""Small IR models shared by the foundation tests."""
from __future__ import annotations

import numpy as np

from ir2onnx.testing import IRWriter


def convert_model(path, src="f16", dst="f32", shape=(None, 3), const_shape=(2, 3)):
    """x -> Convert(dst) -> y, and a Const(src) -> Convert(dst) -> w; saved at ``path``."""
    w = IRWriter("tiny")
    x = w.parameter(list(shape), src, "x")
    c = w.const(np.arange(np.prod(const_shape)).reshape(const_shape).astype(np.float16))
    y = w.layer("Convert", "opset1", [x], {"destination_type": dst}, [(dst, shape)], out_names=["y"])[0]
    z = w.layer("Convert", "opset1", [c], {"destination_type": "f32"}, [("f32", const_shape)], out_names=["w"])[0]
    w.result(y)
    w.result(z)
    return w.save(path)


def runtime_ops(model) -> list[str]:
    """The op types of ``model``'s nodes that run per inference: nodes whose inputs all come from
    initializers (index tables that onnxruntime folds when the session is created) are left out."""
    known = {t.name for t in model.graph.initializer}
    ops = []
    for node in model.graph.node:
        if node.op_type == "Constant" or (node.input and all(i in known for i in node.input if i)):
            known.update(node.output)
        else:
            ops.append(node.op_type)
    return ops
