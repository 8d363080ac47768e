"""The deviations of OpenVINO's runtime from the spec (README: Where OpenVINO's runtime differs from
the spec), each decided by the source framework model: a framework model is converted by one of
OpenVINO's frontends and saved as IR with ``openvino.save_model``'s defaults (f16-compressed
weights, dynamic dims), converted by ir2onnx, and onnxruntime on ours is compared with the
framework's own output: onnxruntime on the original ONNX model (built here with onnx.helper and
read by ``openvino.Core().read_model``), or torch eager (samples/framework/, written by
samples/make_framework_round_trips.py, since torch is not a test dependency). The oracle agrees
with ours; where OpenVINO's runtime differs, the test says so and fails if OpenVINO changes.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import ir2onnx
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "framework"


# -- helpers -----------------------------------------------------------------------------------
def layers(xml: Path) -> list[tuple[str, str, dict]]:
    """(type, version, <data> attributes) of the IR's layers other than Parameter/Const/Result."""
    out = []
    for layer in ET.parse(xml).getroot().iter("layer"):
        if layer.get("type") in ("Parameter", "Const", "Result"):
            continue
        data = layer.find("data")
        out.append((layer.get("type"), layer.get("version"), dict(data.attrib) if data is not None else {}))
    return out


def the_layer(xml: Path, op_type: str) -> tuple[str, dict]:
    """The version and attributes of the only ``op_type`` layer in the IR."""
    found = [(v, a) for t, v, a in layers(xml) if t == op_type]
    assert len(found) == 1, (op_type, layers(xml))
    return found[0]


def ours(xml: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """onnxruntime on ir2onnx's model; the oracle gives the same (bit for bit, or within 1e-5)."""
    got = run_onnx(xml, inputs)
    names = [i.name for i in ir2onnx.convert(xml).graph.input]
    oracle = list(evaluate(ir2onnx.load_ir(xml), dict(zip(names, inputs))).values())
    for g, o in zip(got, oracle):
        if g.dtype.kind == "f":
            np.testing.assert_allclose(g, o, rtol=1e-5, atol=1e-5)
        else:
            assert_bitexact(g, o, "oracle")
    return got


def onnx_round_trip(tmp_path, nodes, inputs, outputs, initializers=(), opset=17):
    """The ONNX model of ``nodes`` saved, read by OpenVINO's ONNX frontend and saved as IR with
    save_model's defaults; returns (the IR's path, a function: feeds -> onnxruntime on the original)."""
    graph = h.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    src = tmp_path / "src.onnx"
    onnx.save(model, src)
    xml = tmp_path / "ir.xml"
    ov.save_model(ov.Core().read_model(src), xml)
    session = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return xml, lambda feeds: session.run(None, dict(zip(names, feeds)))


def io(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def torch_sample(name: str) -> dict[str, tuple[Path, list, list]]:
    """samples/framework/<name>: per input set, (the IR, its inputs, torch's outputs)."""
    folder = SAMPLES / name
    files = lambda s, kind: [np.load(folder / f"{s}_{kind}{k}.npy")
                             for k in range(len(list(folder.glob(f"{s}_{kind}*.npy"))))]
    sets = {x.stem: (x, files(x.stem, "in"), files(x.stem, "out")) for x in sorted(folder.glob("*.xml"))}
    assert sets, folder
    return sets


# -- NonMaxSuppression-5/-9 thresholds -----------------------------------------------------------
NMS_BOXES = np.array([[[0, 0, 1, 1], [0, 0.5, 1, 1.5], [0, 1, 1, 2], [0, 0, 1, 1]]], np.float32)
NMS_SCORES = np.array([[[0.9, 0.5, 0.3, 0.2]]], np.float32)  # iou(0, 1) = 1/3; box 2 touches box 0


@pytest.mark.parametrize("score_t,iou_t,want", [
    (0.3, 0.0, [0]),            # 0.3 == score_threshold is dropped; iou_threshold 0 keeps box 2 (iou 0)
    (0.3, 1 / 3, [0, 1]),       # iou == iou_threshold is kept
    (0.0, 0.0, [0, 2]),
    (0.25, 0.5, [0, 1, 2]),
])
def test_non_max_suppression_thresholds_follow_onnx(tmp_path, score_t, iou_t, want):
    """ONNX NonMaxSuppression -> NonMaxSuppression-9; onnxruntime keeps score > score_threshold
    and suppresses at iou > iou_threshold, and so does ir2onnx. OpenVINO suppresses at iou >= t."""
    init = [h.make_tensor("m", T.INT64, [1], [10]), h.make_tensor("i", T.FLOAT, [1], [iou_t]),
            h.make_tensor("t", T.FLOAT, [1], [score_t])]
    xml, framework = onnx_round_trip(
        tmp_path, [h.make_node("NonMaxSuppression", ["b", "s", "m", "i", "t"], ["y"])],
        [io("b", T.FLOAT, [1, "n", 4]), io("s", T.FLOAT, [1, 1, "n"])], [io("y", T.INT64, ["k", 3])], init)
    assert the_layer(xml, "NonMaxSuppression")[0] == "opset9"
    got, = run_onnx(xml, [NMS_BOXES, NMS_SCORES])[:1]
    oracle = list(evaluate(ir2onnx.load_ir(xml), dict(zip(("b", "s"), (NMS_BOXES, NMS_SCORES)))).values())[0]
    assert_bitexact(got, framework([NMS_BOXES, NMS_SCORES])[0])
    assert_bitexact(got, oracle.astype(got.dtype))
    assert got[:, 2].tolist() == want
    if iou_t in (0.0, 1 / 3):
        assert run_openvino(xml, [NMS_BOXES, NMS_SCORES])[0][:, 2].tolist() == [0]  # iou >= t


# -- integer Divide-1 with m_pythondiv -----------------------------------------------------------
NUM = np.array([4, -4, 7, -7, 5, -9, 0, 9])
DEN = np.array([-6, 6, 2, 2, -3, -3, -5, 4])


@pytest.mark.parametrize("elem,dtype", [(T.INT32, np.int32), (T.INT64, np.int64)])
def test_onnx_integer_div_truncates(tmp_path, elem, dtype):
    """ONNX Div on integers -> Divide-1 m_pythondiv=true; onnxruntime truncates: so does ir2onnx."""
    xml, framework = onnx_round_trip(tmp_path, [h.make_node("Div", ["a", "b"], ["y"])],
                                     [io("a", elem, ["n"]), io("b", elem, ["n"])], [io("y", elem, ["n"])])
    assert the_layer(xml, "Divide")[1]["m_pythondiv"] == "true"
    a, b = NUM.astype(dtype), DEN.astype(dtype)
    got, = ours(xml, [a, b])
    assert_bitexact(got, framework([a, b])[0])
    assert got.tolist() == [0, 0, 3, -3, -1, 3, 0, 2]


def test_torch_trunc_division_truncates():
    """torch.div(a, b, rounding_mode="trunc") on i32 -> Divide-1 m_pythondiv=true alone."""
    xml, inputs, (want,) = torch_sample("divide_trunc")["signs"]
    assert [t for t, _, _ in layers(xml)] == ["Divide"] and the_layer(xml, "Divide")[1]["m_pythondiv"] == "true"
    got, = ours(xml, inputs)
    assert_bitexact(got, want)
    assert_bitexact(run_openvino(xml, inputs)[0].astype(want.dtype), want)


def test_torch_floor_division_floors():
    """torch's a // b on i32 -> Floor(Divide-1 m_pythondiv=true): torch floors, so does ir2onnx
    (the Floor floor-divides the Divide's operands); OpenVINO truncates under the Floor."""
    xml, inputs, (want,) = torch_sample("divide_floor")["signs"]
    assert [t for t, _, _ in layers(xml)] == ["Divide", "Floor"]
    got, = ours(xml, inputs)
    assert_bitexact(got, want)
    assert got.tolist() == [-1, -1, 3, -4, -2, 3, 0, 2]
    assert run_openvino(xml, inputs)[0].tolist() == [0, 0, 3, -3, -1, 3, 0, 2]


# -- ScatterElementsUpdate-12, integer mean ------------------------------------------------------
def test_torch_scatter_reduce_integer_mean_floors():
    """torch scatter_reduce(reduce="mean") on i32 -> ScatterElementsUpdate-12 reduction="mean";
    torch floors the integer mean (like the spec), OpenVINO truncates."""
    xml, inputs, wants = torch_sample("scatter_mean")["floor"]
    found = [a for t, v, a in layers(xml) if t == "ScatterElementsUpdate" and v == "opset12"]
    assert [a["reduction"] for a in found] == ["mean", "mean"]
    got = ours(xml, inputs)
    for g, w in zip(got, wants):
        assert_bitexact(g, w)
    assert wants[0].tolist() == [-3, 4, 2, 1, -1]  # mean(-7, 0, 0) = -7/3 -> -3
    assert run_openvino(xml, inputs)[0].tolist()[0] == -2


# -- Round-5 and Sign edges ----------------------------------------------------------------------
ROUND_EDGES = np.array([0.49999997, 0.5, 1.5, 2.5, -2.5, -0.0, -0.4, 8388609.0, -8388609.0, 16777215.0], np.float32)


def test_onnx_round_is_half_to_even_exact(tmp_path):
    """ONNX Round -> Round-5 half_to_even (no ONNX or PyTorch model writes half_away_from_zero,
    only PaddlePaddle's round); signed zeros and odd integers >= 2^23 come back bit for bit."""
    xml, framework = onnx_round_trip(tmp_path, [h.make_node("Round", ["x"], ["y"])],
                                     [io("x", T.FLOAT, ["n"])], [io("y", T.FLOAT, ["n"])])
    assert the_layer(xml, "Round")[1]["mode"] == "half_to_even"
    got, = ours(xml, [ROUND_EDGES])
    assert_bitexact(got, framework([ROUND_EDGES])[0])


def test_torch_round_and_integer_sign():
    """torch.round on f32 and i32 -> Round-5 half_to_even, torch.sign on i64 -> Sign-1 on i64:
    ir2onnx equals torch bit for bit (signed zeros included, integers kept); OpenVINO's Sign of
    INT64_MAX is -1 and its Round of i32 2^31-1 is -2^31 (through 32 bits / f32)."""
    xml, inputs, wants = torch_sample("round_sign")["edges"]
    assert [a["mode"] for t, _, a in layers(xml) if t == "Round"] == ["half_to_even"] * 2
    got = ours(xml, inputs)
    by_dtype = {g.dtype: g for g in got}
    for w in wants:
        assert_bitexact(by_dtype[w.dtype], w)
    ov_out = {o.dtype: o for o in run_openvino(xml, inputs)}
    assert ov_out[np.dtype(np.int64)][0] != 1 and ov_out[np.dtype(np.int32)][0] != 2**31 - 1


@pytest.mark.parametrize("elem,dtype", [(T.INT64, np.int64), (T.INT32, np.int32)])
def test_onnx_integer_sign(tmp_path, elem, dtype):
    xml, framework = onnx_round_trip(tmp_path, [h.make_node("Sign", ["x"], ["y"])],
                                     [io("x", elem, ["n"])], [io("y", elem, ["n"])])
    info = np.iinfo(dtype)
    x = np.array([info.max, info.min, 5, 0, -3], dtype)
    got, = ours(xml, [x])
    assert_bitexact(got, framework([x])[0])
    assert got.tolist() == [1, -1, 1, 0, -1]


# -- LSTM/GRU/RNNSequence-5 sequence_lengths with dynamic dims -----------------------------------
@pytest.mark.parametrize("op,gates,layer", [("LSTM", 4, "LSTMSequence"), ("GRU", 3, "GRUSequence"),
                                            ("RNN", 1, "RNNSequence")])
def test_onnx_recurrent_sequence_lens_with_dynamic_dims(tmp_path, op, gates, layer):
    """ONNX LSTM/GRU/RNN with sequence_lens and dynamic seq/batch dims -> <op>Sequence-5 on dynamic
    dims: onnxruntime stops short rows (zeros in Y, final state at the row's last step); so does
    ir2onnx. OpenVINO runs them to the end. Weights are f16-exact (save_model compresses them)."""
    rng = np.random.default_rng(0)
    hidden, size = 3, 2
    f16 = lambda *s: rng.standard_normal(s).astype(np.float16).astype(np.float32)
    w, r, b = f16(1, gates * hidden, size), f16(1, gates * hidden, hidden), f16(1, 2 * gates * hidden)
    outs = ["Y", "Yh"] + (["Yc"] if op == "LSTM" else [])
    xml, framework = onnx_round_trip(
        tmp_path, [h.make_node(op, ["X", "W", "R", "B", "L"], outs, hidden_size=hidden)],
        [io("X", T.FLOAT, ["s", "b", size]), io("L", T.INT32, ["b"])], [io(o, T.FLOAT, None) for o in outs],
        [h.make_tensor(n, T.FLOAT, v.shape, v.ravel()) for n, v in (("W", w), ("R", r), ("B", b))])
    assert the_layer(xml, layer)[0] == "opset5"
    x, lengths = rng.standard_normal((4, 3, size)).astype(np.float32), np.array([4, 2, 1], np.int32)
    got, want = ours(xml, [x, lengths]), framework([x, lengths])
    for g, f in zip(got, want):
        np.testing.assert_allclose(g, f, rtol=1e-5, atol=1e-5)
    assert not got[0][2:, 0, 1].any() and not got[0][1:, 0, 2].any()  # [seq, dir, batch, hidden]
    assert np.abs(run_openvino(xml, [x, lengths])[0] - want[0]).max() > 0.1


# -- SpaceToBatch-2 padding ----------------------------------------------------------------------
def test_space_to_batch_pads_with_zeros(tmp_path):
    """No ONNX or PyTorch model becomes SpaceToBatch (ONNX has no such op; only the TensorFlow
    frontends write it, for SpaceToBatchND, which is not installed here): ir2onnx keeps the spec's
    zero padding, TensorFlow's documented algorithm, written here in NumPy (pad with zeros, split
    each dim into (dim/block, block), move the blocks to the front of the batch)."""
    import openvino.opset15 as ops

    x = ov_parameter([None, 2, 1, 1], np.int32, "data")
    node = ops.space_to_batch(x, ops.constant(np.array([1, 2, 1, 3])), ops.constant(np.array([0, 0, 0, 1])),
                              ops.constant(np.array([0, 0, 0, 1])))
    xml = ov_save(tmp_path / "s2b.xml", [node.output(0)], [x])
    data = np.array([[[[1]], [[2]]]], np.int32)
    padded = np.pad(data, [(0, 0), (0, 0), (0, 0), (1, 1)])
    blocks = padded.reshape(1, 1, 1, 2, 1, 1, 1, 3).transpose(2, 4, 6, 0, 1, 3, 5, 7).reshape(6, 1, 1, 1)
    got, = ours(xml, [data])
    assert_bitexact(got, blocks)
    assert got.ravel().tolist() == [0, 1, 0, 0, 2, 0]
    assert run_openvino(xml, [data])[0].ravel().tolist() != got.ravel().tolist()


# -- unsigned integer arithmetic -----------------------------------------------------------------
@pytest.mark.parametrize("op", ["Sub", "Add", "Mul"])
@pytest.mark.parametrize("elem,dtype", [(T.UINT8, np.uint8), (T.UINT16, np.uint16), (T.UINT32, np.uint32)])
def test_onnx_unsigned_arithmetic_wraps(tmp_path, op, elem, dtype):
    """ONNX Sub/Add/Mul on unsigned integers -> Subtract/Add/Multiply-1; onnxruntime wraps modulo
    2^bits, so does ir2onnx; OpenVINO's CPU plugin saturates (1 - 2 = 0 in u8)."""
    xml, framework = onnx_round_trip(tmp_path, [h.make_node(op, ["a", "b"], ["y"])],
                                     [io("a", elem, ["n"]), io("b", elem, ["n"])], [io("y", elem, ["n"])])
    top = np.iinfo(dtype).max
    a, b = np.array([1, top, 16, top // 2 + 3], dtype), np.array([2, 100, 17, 3], dtype)
    got, = ours(xml, [a, b])
    assert_bitexact(got, framework([a, b])[0])
    if elem == T.UINT8:
        assert run_openvino(xml, [a, b])[0].tolist() != got.tolist()


# -- Reshape-1 with zero-sized dims --------------------------------------------------------------
def test_flatten_of_an_empty_batch(tmp_path):
    """ONNX Flatten and torch's x.flatten(1) on a [0, 3, 4, 4] input -> Reshape-1 special_zero=true
    with a constant pattern: every framework gives [0, 48], and so do ir2onnx and OpenVINO."""
    xml, framework = onnx_round_trip(tmp_path, [h.make_node("Flatten", ["x"], ["y"], axis=1)],
                                     [io("x", T.FLOAT, ["n", 3, 4, 4])], [io("y", T.FLOAT, None)])
    assert the_layer(xml, "Reshape")[1]["special_zero"] == "true"
    empty = np.zeros((0, 3, 4, 4), np.float32)
    assert ours(xml, [empty])[0].shape == framework([empty])[0].shape == (0, 48)
    for xml, inputs, (want,) in torch_sample("flatten").values():
        assert the_layer(xml, "Reshape")[1]["special_zero"] == "true"
        got, = ours(xml, inputs)
        assert_bitexact(got, want)


def test_reshape_minus_one_beside_zero_only_from_invalid_onnx(tmp_path):
    """special_zero=false with a -1 beside a 0 comes only from ONNX Reshape(allowzero=1) with both
    a 0 and a -1 in the shape, which the ONNX spec declares invalid (onnxruntime still answers 48):
    ir2onnx keeps the spec's 0 for the -1."""
    xml, framework = onnx_round_trip(tmp_path, [h.make_node("Reshape", ["x", "s"], ["y"], allowzero=1)],
                                     [io("x", T.FLOAT, ["n", 3, 4, 4]), io("s", T.INT64, [2])], [io("y", T.FLOAT, None)])
    assert the_layer(xml, "Reshape")[1]["special_zero"] == "false"
    empty, shape = np.zeros((0, 3, 4, 4), np.float32), np.array([0, -1], np.int64)
    assert framework([empty, shape])[0].shape == (0, 48)
    assert ours(xml, [empty, shape])[0].shape == (0, 0)


# -- FakeQuantize-1 with input_low >= input_high -------------------------------------------------
@pytest.mark.parametrize("scale,zero_point", [(0.01, 128), (-0.01, 128), (-0.02, 10), (0.0, 128)])
def test_onnx_quantize_dequantize(tmp_path, scale, zero_point):
    """ONNX QuantizeLinear/DequantizeLinear -> FakeQuantize-1 (+ Convert, Subtract, Multiply); a
    negative scale gives input_low > input_high, a zero scale input_low == input_high. ir2onnx
    equals onnxruntime on the original; OpenVINO swaps the ends for a negative scale."""
    init = [h.make_tensor("s", T.FLOAT, [], [scale]), h.make_tensor("z", T.UINT8, [], [zero_point])]
    xml, framework = onnx_round_trip(
        tmp_path, [h.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
                   h.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])],
        [io("x", T.FLOAT, ["n"])], [io("y", T.FLOAT, ["n"])], init)
    assert the_layer(xml, "FakeQuantize")[1]["levels"] == "256"
    x = np.linspace(-2, 2, 17).astype(np.float32) + np.float32(0.003)
    got, = ours(xml, [x])
    want = framework([x])[0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    if scale < 0:
        assert np.abs(run_openvino(xml, [x])[0] - want).max() > 1


def test_torch_fake_quantize():
    """torch.fake_quantize_per_tensor_affine -> FakeQuantize-1 with run-time ranges, which the
    PyTorch frontend orders with Minimum/Maximum (so il <= ih even for a negative scale; a zero
    scale gives il == ih == 0): ir2onnx equals torch."""
    for xml, inputs, (want,) in torch_sample("fake_quantize").values():
        assert {"Minimum", "Maximum", "FakeQuantize"} <= {t for t, _, _ in layers(xml)}
        got, = ours(xml, inputs)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


# -- ReduceSum-1 on integers, Convert f32 -> f16 -> f32 ------------------------------------------
def test_torch_integer_sum_is_exact():
    """torch's sum on i64 (and on i32, promoted to i64 by a Convert) -> ReduceSum-1 on i64: torch
    adds exactly and wraps, and so does ir2onnx; OpenVINO adds in f32 after cutting to 32 bits."""
    xml, inputs, wants = torch_sample("integer_sum")["big"]
    assert [t for t, _, _ in layers(xml)].count("ReduceSum") == 2
    assert wants[0].tolist() == [2**53 + 3, -2**62, 2**33 - 2] and wants[1].tolist() == [[2**24 + 3, 2**31 + 1]]
    for g, w in zip(ours(xml, inputs), wants):
        assert_bitexact(g, w)
    assert run_openvino(xml, inputs)[0].tolist() != wants[0].tolist()


def test_torch_half_round_trip_rounds():
    """torch's x.half().float() -> Convert(f16), Convert(f32): torch rounds to f16 (70000 -> inf),
    so does ir2onnx; OpenVINO drops the pair."""
    xml, inputs, (want,) = torch_sample("half_round_trip")["edges"]
    assert [t for t, _, _ in layers(xml)] == ["Convert", "Convert"]
    got, = ours(xml, inputs)
    assert_bitexact(got, want)
    assert np.isinf(want[3]) and want[1] == np.float32(3.140625)
    assert_bitexact(run_openvino(xml, inputs)[0], inputs[0])
