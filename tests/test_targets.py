"""Deployment targets (issue 33, docs/targets.md): ``--target onnx|web|tensorrt`` against the
default ``onnxruntime`` on OpenVINO-written IR and the bundled samples, and ``check --round-trip``
(OpenVINO's ONNX frontend reads the file back)."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import openvino.opset15 as ops
import pytest

from ir2onnx.api import convert, convert_file
from ir2onnx.cli import main as cli
from ir2onnx.errors import Ir2OnnxError, UnsupportedLayer
from ir2onnx.harness.check import check
from ir2onnx.lowering import targets
from ir2onnx.runtime import sessions as runtime
from ir2onnx.testing import ov_compressed_weight, ov_parameter, ov_save
from ir2onnx.testing.targets import compare_targets

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
LLM = SAMPLES / "llm"


def _ops(model) -> list[str]:
    return [n.op_type for n in model.graph.node]


def _run(model, feeds) -> list[np.ndarray]:
    return list(runtime.run(runtime.session(model.SerializeToString()), feeds).values())


def _matmul_ir(tmp_path) -> Path:
    """x [2, 64] @ an i8 weight [16, 64] compressed per output channel (MatMul transpose_b)."""
    x = ov_parameter([2, 64], np.float32, "x")
    w = ov_compressed_weight([16, 64], "i8", zero_point=None, scale_dtype=np.float32)
    return ov_save(tmp_path / "mm.xml", ops.matmul(x, w, False, True), [x])


def test_the_onnx_target_keeps_the_lowest_opset_where_onnxruntime_asks_for_blocks(tmp_path):
    xml = _matmul_ir(tmp_path)
    default, standard = convert(xml), convert(xml, target="onnx")
    assert default.opset_import[0].version == 21  # per-channel weights in blocks for MatMulNBits
    assert standard.opset_import[0].version == 14 and standard.ir_version == 7
    assert [o.domain for o in standard.opset_import] == [""] and not targets.nonstandard_nodes(standard)
    def blocks(model) -> bool:
        dq = next(n for n in model.graph.node if n.op_type == "DequantizeLinear")
        return any(a.name == "block_size" for a in dq.attribute)

    assert blocks(default) and not blocks(standard)
    assert blocks(convert(xml, target="web", opset=21)) and not blocks(convert(xml, target="onnx", opset=21))
    assert not blocks(convert(xml, target="tensorrt", opset=21))
    feeds = {"x": np.random.default_rng(0).standard_normal((2, 64)).astype(np.float32)}
    np.testing.assert_allclose(_run(standard, feeds)[0], _run(default, feeds)[0], rtol=1e-6, atol=1e-6)


def test_nonstandard_nodes_are_counted_in_sub_graphs_too():
    from onnx import helper

    inner = helper.make_graph([helper.make_node("MatMulNBits", ["a"], ["b"], domain="com.microsoft")], "g", [], [])
    node = helper.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=inner)
    model = helper.make_model(helper.make_graph([node], "m", [], []),
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    assert targets.nonstandard_nodes(model) == ["opset_import com.microsoft", "com.microsoft::MatMulNBits",
                                                "com.microsoft::MatMulNBits"]


def test_ir_version_is_pinned_within_what_the_opset_needs(tmp_path, capsys):
    xml = _matmul_ir(tmp_path)
    assert convert(xml, target="onnx", ir_version=9).ir_version == 9
    with pytest.raises(Ir2OnnxError, match="opset 14 needs IR version >= 7"):
        convert(xml, target="onnx", ir_version=6)
    with pytest.raises(Ir2OnnxError, match="target web loads up to 10"):
        convert(xml, target="web", ir_version=11)
    out = tmp_path / "o.onnx"
    assert cli.main(["convert", str(xml), "-o", str(out), "--target", "onnx", "--ir-version", "3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--ir-version 3" in err and not out.exists()


def test_web_refuses_an_opset_onnxruntime_web_does_not_load(tmp_path, capsys):
    xml = _matmul_ir(tmp_path)
    out = tmp_path / "o.onnx"
    assert cli.main(["convert", str(xml), "-o", str(out), "--target", "web", "--opset", "22"]) == 2
    assert "target web (onnxruntime-web) loads opsets up to 21" in capsys.readouterr().err and not out.exists()
    assert convert(xml, target="web").opset_import[0].version == 14


def test_web_refuses_weights_past_one_array_buffer(tmp_path):
    small = dataclasses.replace(targets.TARGETS["web"], max_weight_bytes=100)
    with pytest.raises(Ir2OnnxError, match="target web: the weights take .* ArrayBuffer"):
        convert(_matmul_ir(tmp_path), target=small)


def test_tensorrt_refuses_an_op_its_parser_lacks():
    with pytest.raises(UnsupportedLayer, match="target tensorrt: TensorRT's ONNX parser has no Unique"):
        convert(SAMPLES / "unique" / "float_vector.xml", target="tensorrt")


def test_tensorrt_clamps_a_slice_to_the_end_and_refuses_other_int64_past_int32(tmp_path):
    x = ov_parameter([2, 6], np.float32, "x")
    sliced = ops.slice(x, np.array([1], np.int64), np.array([2**62], np.int64), np.array([1], np.int64),
                       np.array([1], np.int64))
    xml = ov_save(tmp_path / "s.xml", sliced, [x])
    model = convert(xml, target="tensorrt")
    ints = [onnx.numpy_helper.to_array(t) for t in model.graph.initializer if t.data_type == onnx.TensorProto.INT64]
    assert all(abs(int(v)) <= targets.INT32_MAX for a in ints for v in a.reshape(-1))
    feeds = {"x": np.arange(12, dtype=np.float32).reshape(2, 6)}
    np.testing.assert_array_equal(_run(model, feeds)[0], feeds["x"][:, 1:])
    i = ov_parameter([3], np.int64, "i")
    big = ov_save(tmp_path / "b.xml", ops.add(i, np.array([2**40, 1, 2], np.int64)), [i])
    with pytest.raises(UnsupportedLayer, match="beyond int32"):
        convert(big, target="tensorrt")
    assert convert(big).graph.node  # the default target keeps it


@pytest.mark.parametrize("sample", ["dynamic/swin/model.xml", "torch_loop/torch_loop.xml"])
def test_tensorrt_clamps_int64_that_reaches_only_bounds(sample):
    """swin's Pad selects INT64_MAX (Where) as a Slice end; torch's Loop has no trip limit."""
    model = convert(SAMPLES / sample, target="tensorrt")
    ints = [onnx.numpy_helper.to_array(t) for t in model.graph.initializer if t.data_type == onnx.TensorProto.INT64]
    assert all(int(np.abs(a).max(initial=0)) <= targets.INT32_MAX + 1 for a in ints)
    assert not compare_targets(SAMPLES / sample, "tensorrt").failures


def test_tensorrt_takes_static_dims_from_shape(tmp_path):
    x = ov_parameter([None, 3], np.float32, "x")
    xml = ov_save(tmp_path / "r.xml", ops.reshape(ops.relu(x), np.array([-1], np.int64), False), [x])
    model = convert(xml, target="tensorrt", shapes={"x": (2, 3)})
    assert [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim] == [2, 3]
    assert "Shape" not in _ops(model)  # the shape arithmetic folded


def test_tensorrt_writes_fake_quantize_as_symmetric_int8_qdq():
    model = convert(SAMPLES / "real" / "nncf_resnet1" / "model.xml", target="tensorrt")
    inits = {t.name: t for t in model.graph.initializer}
    zps = [inits[n.input[2]] for n in model.graph.node if n.op_type == "QuantizeLinear" and len(n.input) > 2]
    assert zps and all(z.data_type == onnx.TensorProto.INT8 and not onnx.numpy_helper.to_array(z).any() for z in zps)


def _sdpa(tmp_path, q_shape, k_shape, causal=False, mask=None, scale=None):
    q, k, v = (ov_parameter(s, np.float32, n) for s, n in ((q_shape, "q"), (k_shape, "k"), (k_shape, "v")))
    params, args = [q, k, v], [q, k, v]
    if mask is not None:
        m = ov_parameter(*mask, "m")
        params.append(m)
        args.append(m)
    if scale is not None:
        if mask is None:
            args.append(ops.constant(np.float32(0)))
        args.append(scale if not isinstance(scale, float) else ops.constant(np.float32(scale)))
        if not isinstance(scale, float):
            params.append(scale)
    return ov_save(tmp_path / "a.xml", ops.scaled_dot_product_attention(*args, causal=causal), params)


def _formula(q, k, v, bias=0.0, scale=None):
    """Softmax(q k^T * scale + bias) v in float64, key heads repeated per query group."""
    rep = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, rep, axis=1).astype(np.float64), np.repeat(v, rep, axis=1).astype(np.float64)
    s = q.astype(np.float64) @ np.swapaxes(k, -1, -2) * (1 / np.sqrt(q.shape[-1]) if scale is None else scale) + bias
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("case", ["causal", "bool_mask", "float_mask", "scale", "heads"])
def test_attention_23_computes_scaled_dot_product_attention(tmp_path, case):
    rng = np.random.default_rng(1)
    L, S = 3, 5
    shapes = {"q": (1, 4, L, 8), "k": (1, 4 if case != "heads" else 2, S, 8)}
    mask = {"bool_mask": ((1, 1, L, S), np.bool_), "float_mask": ((L, S), np.float32)}.get(case)
    if case == "heads":  # key heads broadcast per group: only where they divide the query's (here 1)
        shapes["k"] = (1, 1, S, 8)
    xml = _sdpa(tmp_path, shapes["q"], shapes["k"], causal=case == "causal", mask=mask,
                scale=0.3 if case == "scale" else None)
    feeds = {n: rng.standard_normal(shapes["q" if n == "q" else "k"]).astype(np.float32) for n in "qkv"}
    bias = 0.0
    if mask is not None:
        feeds["m"] = (rng.random(mask[0]) > 0.3) if mask[1] == np.bool_ else rng.standard_normal(mask[0]).astype(np.float32)
        bias = np.where(feeds["m"], 0, -np.inf) if mask[1] == np.bool_ else feeds["m"]
        if mask[1] == np.bool_:
            feeds["m"][..., 0] = True  # no row without a key
    if case == "causal":  # the upper-left triangle, as OpenVINO's SDPA and ONNX's Attention define it
        bias = np.where(np.arange(S)[None, :] > np.arange(L)[:, None], -np.inf, 0)
    model = convert(xml, target="onnx", opset=23)
    assert _ops(model).count("Attention") == 1 and "Softmax" not in _ops(model)
    got = _run(model, feeds)[0]
    np.testing.assert_allclose(got, _formula(feeds["q"], feeds["k"], feeds["v"], bias, 0.3 if case == "scale" else None),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, _run(convert(xml), feeds)[0], rtol=1e-5, atol=1e-5)
    assert "Attention" not in _ops(convert(xml, target="onnx"))  # the lowest opset: decomposed


def test_attention_23_is_not_used_for_a_run_time_scale(tmp_path):
    s = ov_parameter([], np.float32, "s")
    xml = _sdpa(tmp_path, (1, 2, 3, 4), (1, 2, 3, 4), scale=s)
    assert "Attention" not in _ops(convert(xml, target="onnx", opset=23))


def _rms_ir(tmp_path, exponent=2.0, axis=-1, weight=True):
    x = ov_parameter([2, 3, 8], np.float32, "x")
    mean = ops.reduce_mean(ops.power(x, np.float32(exponent)), np.array([axis], np.int64), keep_dims=True)
    y = ops.divide(x, ops.sqrt(ops.add(mean, np.float32(1e-6))))
    if weight:
        y = ops.multiply(y, np.linspace(0.5, 1.5, 8, dtype=np.float32))
    return ov_save(tmp_path / "rms.xml", y, [x])


@pytest.mark.parametrize("weight", [True, False])
def test_rms_normalization_23_computes_rms_norm(tmp_path, weight):
    xml = _rms_ir(tmp_path, weight=weight)
    model = convert(xml, target="onnx", opset=23)
    assert [op for op in _ops(model) if op != "Identity"] == ["RMSNormalization"]
    x = np.random.default_rng(2).standard_normal((2, 3, 8)).astype(np.float32)
    want = x / np.sqrt(np.mean(x.astype(np.float64) ** 2, -1, keepdims=True) + 1e-6)
    want = want * (np.linspace(0.5, 1.5, 8) if weight else 1)
    np.testing.assert_allclose(_run(model, {"x": x})[0], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("exponent,axis", [(3.0, -1), (2.0, 1)])
def test_other_norms_stay_decomposed(tmp_path, exponent, axis):
    model = convert(_rms_ir(tmp_path, exponent, axis), target="onnx", opset=23)
    assert "RMSNormalization" not in _ops(model)


def _rotary_ir(tmp_path, factor=-1.0, half=4):
    """x [1, 2, 3, 8] rotated as Llama's apply_rotary_pos_emb (rotate_half) writes it."""
    x = ov_parameter([1, 2, 3, 8], np.float32, "x")
    f = ov_parameter([1, 3, 4], np.float32, "f")
    table = ops.concat([f, f], -1)
    cos, sin = (ops.unsqueeze(fn(table), np.array([1], np.int64)) for fn in (ops.cos, ops.sin))

    def part(lo, hi):
        return ops.slice(x, np.array([lo], np.int64), np.array([hi], np.int64), np.array([1], np.int64),
                         np.array([-1], np.int64))

    rotated = ops.concat([ops.multiply(part(half, 2**62), np.float32(factor)), part(0, half)], -1)
    y = ops.add(ops.multiply(x, cos), ops.multiply(rotated, sin))
    return ov_save(tmp_path / "rope.xml", y, [x, f])


def test_rotary_embedding_23_computes_rotate_half(tmp_path):
    model = convert(_rotary_ir(tmp_path), target="onnx", opset=23)
    assert [op for op in _ops(model) if op not in ("Identity", "Cos", "Sin")] == ["RotaryEmbedding"]
    rng = np.random.default_rng(3)
    x, f = rng.standard_normal((1, 2, 3, 8)).astype(np.float32), rng.standard_normal((1, 3, 4)).astype(np.float32)
    c, s = np.cos(f.astype(np.float64))[:, None], np.sin(f.astype(np.float64))[:, None]
    x1, x2 = x[..., :4].astype(np.float64), x[..., 4:].astype(np.float64)
    want = np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1)
    np.testing.assert_allclose(_run(model, {"x": x, "f": f})[0], want, rtol=1e-5, atol=1e-6)


def test_other_rotations_stay_decomposed(tmp_path):
    assert "RotaryEmbedding" not in _ops(convert(_rotary_ir(tmp_path, factor=-2.0), target="onnx", opset=23))
    assert "RotaryEmbedding" not in _ops(convert(_rotary_ir(tmp_path, half=3), target="onnx", opset=23))


def test_the_llm_samples_take_the_opset_23_forms_and_decode_openvinos_tokens(tmp_path, capsys):
    model = convert(LLM / "llama_fp32" / "openvino_model.xml", target="onnx", opset=23)
    assert _ops(model).count("Attention") == 2 and _ops(model).count("RMSNormalization") == 5
    assert _ops(model).count("RotaryEmbedding") == 4  # q and k of both layers
    greedy = json.loads((LLM / "llama_fp32" / "greedy.json").read_text())
    np.save(tmp_path / "p.npy", np.array([greedy["prompt"]], np.int64))
    out = tmp_path / "m.onnx"
    assert cli.main(["convert", str(LLM / "llama_fp32" / "openvino_model.xml"), "-o", str(out), "--target", "onnx",
                     "--opset", "23", "-q"]) == 0
    capsys.readouterr()
    assert cli.main(["run", str(out), "--steps", "16", "--input", f"input_ids={tmp_path / 'p.npy'}"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("tokens[0]:"))
    assert [int(t) for t in line.split(":")[1].split()] == greedy["tokens"]


def test_run_converts_an_ir_for_the_target(tmp_path, capsys):
    assert cli.main(["run", str(LLM / "llama_int4" / "openvino_model.xml"), "--target", "onnx", "--steps", "2"]) == 0
    assert "tokens[0]:" in capsys.readouterr().out
    onnx.save(convert(SAMPLES / "real" / "cnn" / "model.xml"), tmp_path / "m.onnx")
    assert cli.main(["run", str(tmp_path / "m.onnx"), "--target", "web"]) == 2
    assert "is ONNX already" in capsys.readouterr().err


def test_genai_folders_are_for_onnxruntime_only(tmp_path, capsys):
    assert cli.main(["convert", str(LLM / "llama_fp32" / "openvino_model.xml"), "--genai", str(tmp_path / "g"),
                     "--target", "onnx"]) == 2
    assert "--genai" in capsys.readouterr().err and not (tmp_path / "g").exists()


@pytest.mark.slow
def test_compare_targets_finds_equal_outputs_and_no_contrib_node():
    r = compare_targets(LLM / "mixtral_int8" / "openvino_model.xml", "onnx")
    assert r.opset == 16 and r.default_opset == 21 and r.nonstandard == [] and r.compared == 20 and not r.failures


def test_round_trip_reads_the_file_back_with_openvino(capsys):
    xml = SAMPLES / "real" / "cnn" / "model.xml"
    assert cli.main(["check", str(xml), "--round-trip", "--target", "onnx", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "openvino:onnx vs openvino" in out and "PASS" in out


def test_round_trip_of_a_stateful_llm_carries_the_state():
    result = check(LLM / "llama_int4" / "openvino_model.xml", oracle=False, round_trip=True, target="onnx")
    assert result.ok and result.backend("openvino:onnx").status == "ok"
    pairs = {(c.a, c.b) for o in result.outputs for c in o.comparisons}
    assert ("openvino:onnx", "openvino") in pairs and len(result.outputs) == 20


def test_round_trip_reports_what_openvino_cannot_read_as_refused():
    """The default target's int4 embedding table: the gathered rows' blocked DequantizeLinear has
    a dynamic input, which OpenVINO's ONNX frontend (2026.4) cannot take: a frontend limit."""
    result = check(LLM / "llama_int4" / "openvino_model.xml", oracle=False, round_trip=True)
    back = result.backend("openvino:onnx")
    assert result.ok and back.status == "refused" and "DequantizeLinear cannot operate with dynamic shapes" in back.message


# -- the sweeps over every bundled IR (slow) ------------------------------------------------------
ALL = sorted(p for p in SAMPLES.rglob("*.xml"))
LLMS = sorted(p.name for p in LLM.iterdir() if (p / "greedy.json").is_file())


@pytest.mark.slow
@pytest.mark.parametrize("xml", ALL, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_sample_converts_for_the_onnx_target_as_the_default_computes(xml):
    r = compare_targets(xml, "onnx")
    assert r.nonstandard == [] and r.compared > 0 and not r.failures, r.failures


@pytest.mark.slow
@pytest.mark.parametrize("name", LLMS)
@pytest.mark.parametrize("opset", [None, 23])
def test_every_llm_sample_decodes_openvinos_tokens_for_the_onnx_target(name, opset, tmp_path):
    from ir2onnx.llm.decode import greedy as decode
    from ir2onnx.llm.interface import load_interface

    want = json.loads((LLM / name / "greedy.json").read_text())
    path = convert_file(LLM / name / "openvino_model.xml", tmp_path / "m.onnx", target="onnx", opset=opset)
    assert not targets.nonstandard_nodes(onnx.load(str(path)))
    tokens, _ = decode(runtime.session(path), load_interface(path), np.array([want["prompt"]], np.int64),
                       len(want["tokens"]))
    assert tokens[0].tolist() == want["tokens"]
