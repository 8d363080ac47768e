"""ScaledDotProductAttention-13 on OpenVINO-written IR (causal, boolean and float masks, explicit
scale, broadcast batch dims, dynamic sequence lengths), against the float64 oracle and the
OpenVINO runtime: f32 rtol 1e-5, atol 1e-5 (two MatMuls and a softmax over a few terms)."""
from __future__ import annotations

import numpy as np
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import InvalidLayer, Ir2OnnxError
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, ov_parameter, ov_save, run_onnx, run_openvino

TOL = dict(rtol=1e-5, atol=1e-5)


def _sdpa_ir(tmp_path, q_shape, k_shape, v_shape, causal=False, mask=None, scale=False):
    q, k, v = (ov_parameter(s, np.float32, n) for s, n in ((q_shape, "q"), (k_shape, "k"), (v_shape, "v")))
    params, args = [q, k, v], [q, k, v]
    if mask is not None:
        m = ov_parameter(mask[0], mask[1], "m")
        params.append(m)
        args.append(m)
    if scale:
        s = ov_parameter([], np.float32, "s")
        params.append(s)
        if mask is None:
            args.append(ops.constant(np.float32(0)))
        args.append(s)
    return ov_save(tmp_path / "a.xml", ops.scaled_dot_product_attention(*args, causal=causal), params)


def _feeds(rng, shapes):
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items() if n in "qkvs"}
    if "m" in shapes:
        shape, dtype = shapes["m"]
        feeds["m"] = (rng.random(shape) > 0.3) if dtype == np.bool_ else rng.standard_normal(shape).astype(np.float32)
    if "s" in feeds:
        feeds["s"] = np.array(0.3, np.float32)
    return feeds


def _check(xml, feeds):
    got = run_onnx(xml, feeds)[0]
    np.testing.assert_allclose(got, next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values())), **TOL)
    np.testing.assert_allclose(got, run_openvino(xml, feeds)[0], **TOL)
    return got


def _numpy_sdpa(q, k, v, bias=0.0, scale=None):
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = q.astype(np.float64) @ np.swapaxes(k, -1, -2) * scale + bias
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L,S", [(4, 4), (3, 5), (5, 3)])
def test_plain_and_causal(tmp_path, causal, L, S):
    xml = _sdpa_ir(tmp_path, [1, 2, L, 8], [1, 2, S, 8], [1, 2, S, 6], causal=causal)
    rng = np.random.default_rng(11)
    feeds = _feeds(rng, {"q": (1, 2, L, 8), "k": (1, 2, S, 8), "v": (1, 2, S, 6)})
    bias = np.where(np.arange(S)[None, :] > np.arange(L)[:, None], -np.inf, 0) if causal else 0.0
    np.testing.assert_allclose(_check(xml, feeds), _numpy_sdpa(feeds["q"], feeds["k"], feeds["v"], bias), **TOL)


@pytest.mark.parametrize("mask", [((1, 2, 4, 5), np.bool_), ((2, 1, 1, 5), np.float32), ((4, 5), np.float32)])
def test_masks(tmp_path, mask):
    xml = _sdpa_ir(tmp_path, [2, 2, 4, 8], [2, 2, 5, 8], [2, 2, 5, 8], mask=mask)
    rng = np.random.default_rng(12)
    feeds = _feeds(rng, {"q": (2, 2, 4, 8), "k": (2, 2, 5, 8), "v": (2, 2, 5, 8), "m": mask})
    if mask[1] == np.bool_:
        feeds["m"][..., 0] = True  # every row keeps one key (a row masked everywhere is NaN)
    _check(xml, feeds)


def test_scale_and_broadcast_batch(tmp_path):
    xml = _sdpa_ir(tmp_path, [2, 1, 3, 4], [1, 3, 5, 4], [2, 3, 5, 4], scale=True)
    feeds = _feeds(np.random.default_rng(13), {"q": (2, 1, 3, 4), "k": (1, 3, 5, 4), "v": (2, 3, 5, 4), "s": ()})
    got = _check(xml, feeds)
    assert got.shape == (2, 3, 3, 4)


def test_dynamic_lengths_causal(tmp_path):
    """Dynamic L and S: the causal bias is built at run time (Range, Less, Where)."""
    xml = _sdpa_ir(tmp_path, [1, None, 8], [1, None, 8], [1, None, 8], causal=True)
    assert "Range" in [n.op_type for n in convert(xml).graph.node]
    feeds = _feeds(np.random.default_rng(14), {"q": (1, 6, 8), "k": (1, 6, 8), "v": (1, 6, 8)})
    _check(xml, feeds)


def test_mismatched_embedding_is_invalid(tmp_path):
    w = IRWriter()
    q, k, v = w.parameter([1, 3, 4], "f32", "q"), w.parameter([1, 3, 5], "f32", "k"), w.parameter([1, 3, 4], "f32", "v")
    w.result(w.layer("ScaledDotProductAttention", "opset13", [q, k, v], {"causal": False}, [("f32", [1, 3, 4])],
                     name="att")[0])
    with pytest.raises(InvalidLayer, match="att.*embedding sizes differ"):
        convert(w.save(tmp_path / "bad.xml"))


def _gqa_ir(tmp_path, mask_kind, kv=2, rep=3, d=8, length_from="k"):
    """torch's repeat_kv before SDPA, as OpenVINO writes it: k, v [B, kv, T, D] -> Unsqueeze(2)
    -> Broadcast to [B, kv, rep, T, D] (the batch from ShapeOf of another tensor, q's; the length
    from k's, or q's with ``length_from="q"``) -> Reshape [0, kv*rep, -1, D]."""
    q = ov_parameter([None, kv * rep, None, d], np.float32, "q")
    k, v = (ov_parameter([None, kv, None, d], np.float32, n) for n in "kv")
    qs, ks = ops.shape_of(q), ops.shape_of(k)

    def pick(shape, i):
        return ops.gather(shape, ops.constant(np.array([i], np.int64)), ops.constant(np.int64(0)))

    length = pick(ks, 2) if length_from == "k" else pick(qs, 2)
    target = ops.concat([pick(qs, 0), ops.constant(np.array([kv, rep], np.int64)), length,
                         ops.constant(np.array([d], np.int64))], 0)

    def repeat(x):
        wide = ops.broadcast(ops.unsqueeze(x, ops.constant(np.array([2], np.int64))), target)
        return ops.reshape(wide, ops.constant(np.array([0, kv * rep, -1, d], np.int64)), True)

    params, args = [q, k, v], [q, repeat(k), repeat(v)]
    if mask_kind in ("float1", "floatH", "bool"):
        heads = kv * rep if mask_kind == "floatH" else 1
        m = ov_parameter([None, heads, None, None], np.bool_ if mask_kind == "bool" else np.float32, "m")
        params.append(m)
        args.append(m)
    out = ops.scaled_dot_product_attention(*args, causal=mask_kind == "causal")
    return ov_save(tmp_path / "gqa.xml", out, params)


@pytest.mark.parametrize("mask_kind", ["none", "causal", "float1", "floatH", "bool"])
@pytest.mark.parametrize("kv_batch", [2, 1])
def test_grouped_query_attention_reads_the_heads_without_a_copy(tmp_path, mask_kind, kv_batch):
    """No copy of K or V at all (the Broadcast's Expand is unread and left out; the attention's
    MatMuls read K and V as they are and broadcast them over the group and, for a key and value
    of batch 1, over the batch, as the Broadcast did), and every output is OpenVINO's, the
    oracle's and numpy's on the repeated heads."""
    xml = _gqa_ir(tmp_path, mask_kind)
    model = convert(xml)
    assert not [n.name for n in model.graph.node if n.op_type in ("Expand", "Tile")]
    rng = np.random.default_rng(8)
    feeds = {"q": rng.standard_normal((2, 6, 3, 8)).astype(np.float32),
             "k": rng.standard_normal((kv_batch, 2, 5, 8)).astype(np.float32),
             "v": rng.standard_normal((kv_batch, 2, 5, 8)).astype(np.float32)}
    if mask_kind in ("float1", "floatH", "bool"):
        shape = (2, 6 if mask_kind == "floatH" else 1, 3, 5)
        feeds["m"] = rng.random(shape) > 0.3 if mask_kind == "bool" else rng.standard_normal(shape).astype(np.float32)
        feeds["m"][..., 0] = True if mask_kind == "bool" else feeds["m"][..., 0]  # no row fully masked
    got = _check(xml, feeds)
    bias = 0.0
    if mask_kind == "causal":
        bias = np.where(np.arange(5)[None] > np.arange(3)[:, None], -np.inf, 0)
    elif mask_kind == "bool":
        bias = np.where(feeds["m"], 0, -np.inf)
    elif mask_kind != "none":
        bias = feeds["m"]
    rep = lambda x: np.repeat(x, 3, axis=1)  # noqa: E731
    np.testing.assert_allclose(got, _numpy_sdpa(feeds["q"], rep(feeds["k"]), rep(feeds["v"]), bias), **TOL)


def _gqa_feeds(seed, batch, kv_batch, kv_length, mask_width):
    """Feeds of :func:`_gqa_ir` with a float mask: 3 queries, 6 heads, 2 KV heads, head size 8."""
    rng = np.random.default_rng(seed)
    return {"q": rng.standard_normal((batch, 6, 3, 8)).astype(np.float32),
            "k": rng.standard_normal((kv_batch, 2, kv_length, 8)).astype(np.float32),
            "v": rng.standard_normal((kv_batch, 2, kv_length, 8)).astype(np.float32),
            "m": rng.standard_normal((batch, 1, 3, mask_width)).astype(np.float32)}


def test_grouped_query_attention_of_a_one_token_cache_broadcast_longer_raises(tmp_path):
    """The documented deviation (docs/deviations.md): where repeat_kv's Broadcast would stretch a
    key and value of length 1 to a longer target (here the query's length, 3; optimum-intel's
    targets are the cache's own length, so its LLMs never do), onnxruntime raises a shape error
    in the value MatMul rather than compute; OpenVINO computes."""
    xml = _gqa_ir(tmp_path, "float1", length_from="q")
    feeds = _gqa_feeds(9, batch=1, kv_batch=1, kv_length=1, mask_width=3)
    assert run_openvino(xml, feeds)[0].shape == (1, 6, 3, 8)
    with pytest.raises(Ir2OnnxError, match="MatMul dimension mismatch"):
        run_onnx(xml, feeds)
    _check(xml, _gqa_feeds(11, batch=1, kv_batch=1, kv_length=3, mask_width=3))  # as long as the target


def test_attention_23_of_a_one_row_cache_against_a_larger_batch_raises(tmp_path):
    """The other half of that deviation: the ``onnx`` target's Attention-23 (opset 23) reads repeat_kv's
    key and value as they are, and Attention does not broadcast a batch of 1 as the Broadcast did."""
    import onnxruntime as ort

    xml = _gqa_ir(tmp_path, "float1")
    model = convert(xml, target="onnx", opset=23)
    assert [n.op_type for n in model.graph.node].count("Attention") == 1
    feeds = _gqa_feeds(10, batch=2, kv_batch=1, kv_length=5, mask_width=5)
    assert run_openvino(xml, feeds)[0].shape == (2, 6, 3, 8)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.Fail, match="inconsistent batch_size"):
        session.run(None, feeds)
