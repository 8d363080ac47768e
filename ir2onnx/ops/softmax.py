"""SoftMax-1/-8 and LogSoftmax-5 -> Softmax(axis) and LogSoftmax(axis) (floats only; one axis,
opset 13 semantics; SoftMax-8 and LogSoftmax-5 count negative axes from the end)."""
from __future__ import annotations

from ..errors import InvalidLayer
from ..lowering.registry import lowers
from ._common.inputs import float_input


def _softmax(ctx, layer, inputs, allow_negative: bool):
    x = inputs[0]
    float_input(ctx, layer, x)
    axis = int(layer.attrs.get("axis", 1))
    rank = x.rank
    low = -rank if (allow_negative and rank is not None) else 0
    if (rank is not None and not low <= axis < rank) or (not allow_negative and axis < 0):
        raise InvalidLayer(layer, f"axis {axis} is out of range for rank {rank}")
    if rank == 0:
        raise InvalidLayer(layer, "SoftMax needs an input of rank >= 1")
    return [ctx.b.Softmax(x, axis=axis)]


@lowers("SoftMax", "opset1")
def softmax1(ctx, layer, inputs):
    """SoftMax-1 -> Softmax(axis) (opset 13 semantics: one axis)."""
    return _softmax(ctx, layer, inputs, allow_negative=False)


@lowers("SoftMax", "opset8")
def softmax8(ctx, layer, inputs):
    """SoftMax-8 -> Softmax(axis) (negative axes count from the end)."""
    return _softmax(ctx, layer, inputs, allow_negative=True)


@lowers("LogSoftmax", "opset5")
def log_softmax(ctx, layer, inputs):
    """LogSoftmax-5 -> LogSoftmax(axis) (negative axes count from the end)."""
    x = inputs[0]
    float_input(ctx, layer, x)
    axis = int(layer.attrs["axis"])
    if x.rank is not None and not -x.rank <= axis < x.rank:
        raise InvalidLayer(layer, f"axis {axis} is out of range for rank {x.rank}")
    return [ctx.b.LogSoftmax(x, axis=axis)]
