"""GatherND-8 -> GatherND(batch_dims) and ScatterNDUpdate-3 -> ScatterND (indices Cast to i64;
the output shapes of GatherND-8, with the batch dims kept, are ONNX's)."""
from __future__ import annotations

from ..errors import InvalidLayer, UnsupportedLayer
from ..lowering.registry import lowers

_INT64 = 7


def _indices(ctx, layer, idx):
    if idx.etype is None or idx.etype.name not in ("i32", "i64"):
        raise InvalidLayer(layer, f"indices must be i32 or i64, got {idx.etype.name if idx.etype else '?'}")
    return idx if idx.etype.name == "i64" else ctx.b.Cast(idx, to=_INT64)


def _known_rank(layer, *values):
    if any(v.rank is None for v in values):
        raise UnsupportedLayer(layer, f"{layer.type} needs inputs of known rank")


@lowers("GatherND", "opset8")
def gather_nd8(ctx, layer, inputs):
    """GatherND-8 (data, indices) -> GatherND(batch_dims) (Cast of i32 indices)."""
    data, idx = inputs
    _known_rank(layer, data, idx)
    ctx.onnx_type(layer, data.etype)
    bd = int(layer.attrs["batch_dims"])
    if not 0 <= bd < min(data.rank, idx.rank):
        raise InvalidLayer(layer, f"batch_dims={bd} must be in [0, min(data rank, indices rank))")
    depth = idx.shape[-1]
    if depth is None:
        raise UnsupportedLayer(layer, "a dynamic last dim of indices is not supported")
    if bd + depth > data.rank:
        raise InvalidLayer(layer, f"indices address {depth} dims after {bd} batch dims of a rank-{data.rank} tensor")
    for i in range(bd):
        a, b = data.shape[i], idx.shape[i]
        if a is not None and b is not None and a != b:
            raise InvalidLayer(layer, f"batch dim {i} differs: data {a}, indices {b}")
    return [ctx.b.GatherND(data, _indices(ctx, layer, idx), batch_dims=bd)]


@lowers("ScatterNDUpdate", "opset4")
def scatter_nd_update3(ctx, layer, inputs):
    """ScatterNDUpdate-3 (data, indices, updates; OpenVINO writes version opset4) -> ScatterND
    (Cast of i32 indices)."""
    data, idx, updates = inputs
    _known_rank(layer, data, idx, updates)
    ctx.onnx_type(layer, data.etype)
    if updates.etype != data.etype:
        raise InvalidLayer(layer, f"updates are {updates.etype.name} but data is {data.etype.name}")
    depth = idx.shape[-1] if idx.rank else None
    if depth is None:
        raise UnsupportedLayer(layer, "indices of rank 0 or with a dynamic last dim are not supported")
    if depth > data.rank:
        raise InvalidLayer(layer, f"indices address {depth} dims of a rank-{data.rank} tensor")
    if updates.rank != idx.rank - 1 + data.rank - depth:
        raise InvalidLayer(layer, f"updates of rank {updates.rank} do not match indices {idx.shape} and "
                                  f"data of rank {data.rank}")
    return [ctx.b.ScatterND(data, _indices(ctx, layer, idx), updates)]
