"""CTCGreedyDecoder-1 and CTCGreedyDecoderSeqLen-6 on OpenVINO-written CTC recognizers: a conv
head with f16-compressed weights over a text-line image, the classes per time step decoded.
Every output is compared bit for bit with OpenVINO, the oracle and a hand-worked decoding."""
from __future__ import annotations

import numpy as np
import openvino.opset1 as o1
import openvino.opset6 as o6
import openvino.opset15 as ops
import pytest

import ir2onnx
from ir2onnx.api import convert
from ir2onnx.errors import UnsupportedLayer
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import assert_bitexact, ov_parameter, ov_save, run_onnx, run_openvino


def _all_bitexact(xml, feeds):
    got = run_onnx(xml, feeds)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    ov_out = run_openvino(xml, feeds)
    assert len(got) == len(want) == len(ov_out)
    for g, w, o in zip(got, want, ov_out):
        assert_bitexact(g, w, "oracle")
        assert_bitexact(g, o, "openvino")
    return got


def _onehot(seq, classes):
    """Scores [T, C] whose arg-max per step is ``seq``; equal maxima at the class and the class
    after it (the first one wins)."""
    s = np.zeros((len(seq), classes), np.float32)
    for t, k in enumerate(seq):
        s[t, k] = 2.0
        if k + 1 < classes:
            s[t, k + 1] = 2.0 if t % 2 else 1.0
    return s


# blank = 4 (C - 1): "1 1 4 1 2 2 4 4 0" -> merged "1 1 2 0", unmerged "1 1 1 2 2 0"
SEQ = [1, 1, 4, 1, 2, 2, 4, 4, 0]


@pytest.mark.parametrize("merge,expected", [(True, [1, 1, 2, 0]), (False, [1, 1, 1, 2, 2, 0])])
def test_ctc_greedy_decoder_hand_worked(tmp_path, merge, expected):
    data = ov_parameter([9, 2, 5], np.float32, "data")
    mask = ov_parameter([9, 2], np.float32, "mask")
    xml = ov_save(tmp_path / "c.xml", [o1.ctc_greedy_decoder(data, mask, merge)], [data, mask])
    scores = np.stack([_onehot(SEQ, 5), _onehot(SEQ[::-1], 5)], axis=1)
    m = np.ones((9, 2), np.float32)
    m[6:, 1] = 0  # the second sequence ends after 6 steps: 0 4 4 2 2 1 -> "0 2 1" / "0 2 2 1"
    m[8, 1] = 1  # a mask value after the first zero is ignored
    got = _all_bitexact(xml, {"data": scores, "mask": m})[0]
    assert got.shape == (2, 9, 1, 1) and got.dtype == np.float32
    assert got[0, :, 0, 0].tolist() == expected + [-1] * (9 - len(expected))
    second = [0, 2, 1] if merge else [0, 2, 2, 1]
    assert got[1, :, 0, 0].tolist() == second + [-1] * (9 - len(second))


def _logits(img, classes, seed):
    """A text-line recognizer's head: image [N, 3, 1, T] -> 1x1 conv -> logits [N, C, T]."""
    k = np.random.default_rng(seed).standard_normal((classes, 3, 1, 1)).astype(np.float32)
    conv = ops.convolution(img, ops.constant(k), [1, 1], [0, 0], [0, 0], [1, 1])
    return ops.squeeze(conv, ops.constant(np.array([2], np.int64)))


@pytest.mark.parametrize("merge", [True, False])
@pytest.mark.parametrize("steps", [12, None])
def test_ctc_greedy_decoder_recognizer(tmp_path, merge, steps):
    """Like license-plate-recognition-barrier-0001: logits [T, N, C] and a mask [T, N]."""
    img = ov_parameter([None, 3, 1, steps], np.float32, "img")
    mask = ov_parameter([steps, None], np.float32, "mask")
    tnc = ops.transpose(_logits(img, 7, 0), ops.constant(np.array([2, 0, 1], np.int64)))
    xml = ov_save(tmp_path / "lpr.xml", [o1.ctc_greedy_decoder(tnc, mask, merge)], [img, mask],
                  compress_to_fp16=True)
    rng = np.random.default_rng(1)
    feeds = {"img": rng.standard_normal((3, 3, 1, 12)).astype(np.float32),
             "mask": (np.arange(12)[:, None] < np.array([12, 7, 0])[None, :]).astype(np.float32)}
    got = _all_bitexact(xml, feeds)[0]
    assert (got[2] == -1).all()  # an empty sequence
    assert (got[1, 7:] == -1).all() and (got[0, 0] >= 0).all()


@pytest.mark.parametrize("merge", [True, False])
@pytest.mark.parametrize("itype,ltype", [("i32", "i32"), ("i64", "i32"), ("i32", "i64")])
def test_seq_len_hand_worked(tmp_path, merge, itype, ltype):
    data = ov_parameter([2, 9, 5], np.float32, "data")
    lengths = ov_parameter([2], np.int32, "lengths")
    node = o6.ctc_greedy_decoder_seq_len(data, lengths, None, merge, itype, ltype)
    xml = ov_save(tmp_path / "s.xml", [node.output(0), node.output(1)], [data, lengths])
    scores = np.stack([_onehot(SEQ, 5), _onehot(SEQ[::-1], 5)])
    got = _all_bitexact(xml, {"data": scores, "lengths": np.array([9, 6], np.int32)})
    first = [1, 1, 2, 0] if merge else [1, 1, 1, 2, 2, 0]
    second = [0, 2, 1] if merge else [0, 2, 2, 1]
    assert got[0].dtype == (np.int32 if itype == "i32" else np.int64)
    assert got[1].dtype == (np.int32 if ltype == "i32" else np.int64)
    assert got[0].tolist() == [first + [-1] * (9 - len(first)), second + [-1] * (9 - len(second))]
    assert got[1].tolist() == [len(first), len(second)]


@pytest.mark.parametrize("blank_kind", ["const", "param"])
def test_seq_len_blank_index(tmp_path, blank_kind):
    """blank_index 1 (constant or run-time): class 4 is an ordinary class then."""
    data = ov_parameter([2, 9, 5], np.float32, "data")
    lengths = ov_parameter([2], np.int64, "lengths")
    blank = ops.constant(np.array([1], np.int64)) if blank_kind == "const" else ov_parameter([], np.int64, "blank")
    node = o6.ctc_greedy_decoder_seq_len(data, lengths, blank, True, "i64", "i64")
    params = [data, lengths] + ([blank] if blank_kind == "param" else [])
    xml = ov_save(tmp_path / "s.xml", [node.output(0), node.output(1)], params)
    feeds = {"data": np.stack([_onehot(SEQ, 5), _onehot(SEQ[::-1], 5)]), "lengths": np.array([9, 9], np.int64)}
    if blank_kind == "param":
        feeds["blank"] = np.array(1, np.int64)
    got = _all_bitexact(xml, feeds)
    assert got[0][0].tolist() == [4, 2, 4, 0, -1, -1, -1, -1, -1]  # 1 1 4 1 2 2 4 4 0 without 1s


@pytest.mark.parametrize("batch,steps", [(None, None), (2, 10)])
def test_seq_len_recognizer(tmp_path, batch, steps):
    """Like text-recognition heads: logits [N, C, T] -> [N, T, C] -> CTCGreedyDecoderSeqLen."""
    img = ov_parameter([batch, 3, 1, steps], np.float32, "img")
    lengths = ov_parameter([batch], np.int32, "lengths")
    ntc = ops.transpose(_logits(img, 6, 2), ops.constant(np.array([0, 2, 1], np.int64)))
    node = o6.ctc_greedy_decoder_seq_len(ntc, lengths, None, True)
    xml = ov_save(tmp_path / "r.xml", [node.output(0), node.output(1)], [img, lengths], compress_to_fp16=True)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        feeds = {"img": rng.standard_normal((2, 3, 1, 10)).astype(np.float32),
                 "lengths": np.array([10, rng.integers(0, 10)], np.int32)}
        got = _all_bitexact(xml, feeds)
        assert (got[0][1, got[1][1]:] == -1).all()


def test_f16_data(tmp_path):
    data = ov_parameter([2, 9, 5], np.float16, "data")
    lengths = ov_parameter([2], np.int32, "lengths")
    node = o6.ctc_greedy_decoder_seq_len(data, lengths, None, True)
    xml = ov_save(tmp_path / "s.xml", [node.output(0), node.output(1)], [data, lengths])
    scores = np.stack([_onehot(SEQ, 5), _onehot(SEQ[::-1], 5)]).astype(np.float16)
    got = _all_bitexact(xml, {"data": scores, "lengths": np.array([9, 6], np.int32)})
    assert got[1].tolist() == [4, 3]


def test_decoder_dynamic_classes_refused(tmp_path):
    data = ov_parameter([9, 2, None], np.float32, "data")
    mask = ov_parameter([9, 2], np.float32, "mask")
    xml = ov_save(tmp_path / "c.xml", [o1.ctc_greedy_decoder(data, mask, True)], [data, mask])
    with pytest.raises(UnsupportedLayer, match="static class dim"):
        convert(xml)


def test_decoder_f16_data_and_mask(tmp_path):
    """f16 data and mask: the output is f16 (the data's type), the classes as before."""
    data = ov_parameter([9, 1, 5], np.float16, "data")
    mask = ov_parameter([9, 1], np.float16, "mask")
    xml = ov_save(tmp_path / "c.xml", [o1.ctc_greedy_decoder(data, mask, True)], [data, mask])
    feeds = {"data": _onehot(SEQ, 5)[:, None, :].astype(np.float16), "mask": np.ones((9, 1), np.float16)}
    got = _all_bitexact(xml, feeds)[0]
    assert got.dtype == np.float16 and got[0, :5, 0, 0].tolist() == [1, 1, 2, 0, -1]


def test_recognizer_with_recurrent_body(tmp_path):
    """A license-plate/text recognizer as the zoo's IRs are shaped: img [2, 3, 8, 16] -> 3x3 Conv +
    ReLU -> MaxPool over the height -> [N, T, 16] -> LSTMSequence-5 (f16-compressed weights) ->
    MatMul to 8 classes -> CTCGreedyDecoderSeqLen-6 (run-time lengths) and, on [T, N, C],
    CTCGreedyDecoder-1 (run-time mask). The logits agree within 1e-5 and their best class leads by
    more than 1e-3 at every step, so the decoded sequences must be equal exactly."""
    rng = np.random.default_rng(8)
    n, t, hidden, classes = 2, 16, 12, 8
    f32 = lambda a: ops.constant(np.asarray(a, np.float32))  # noqa: E731
    img = ov_parameter([n, 3, 8, t], np.float32, "img")
    lengths = ov_parameter([n], np.int32, "lengths")
    mask = ov_parameter([t, n], np.float32, "mask")
    conv = ops.relu(ops.add(ops.convolution(img, f32(rng.standard_normal((16, 3, 3, 3)) * 0.4), [1, 1], [1, 1],
                                            [1, 1], [1, 1]), f32(rng.standard_normal((1, 16, 1, 1)) * 0.1)))
    cols = ops.max_pool(conv, [1, 1], [1, 1], [0, 0], [0, 0], [8, 1]).output(0)  # [N, 16, 1, T]
    seq = ops.transpose(ops.squeeze(cols, ops.constant(np.array([2], np.int64))),
                        ops.constant(np.array([0, 2, 1], np.int64)))  # [N, T, 16]
    zeros = f32(np.zeros((n, 1, hidden)))
    lstm = ops.lstm_sequence(seq, zeros, zeros, ops.constant(np.full(n, t, np.int32)),
                             f32(rng.standard_normal((1, 4 * hidden, 16)) * 0.3),
                             f32(rng.standard_normal((1, 4 * hidden, hidden)) * 0.5),
                             f32(rng.standard_normal((1, 4 * hidden)) * 0.2), hidden, "forward")
    feats = ops.squeeze(lstm.output(0), ops.constant(np.array([1], np.int64)))  # [N, T, hidden]
    logits = ops.add(ops.matmul(feats, f32(rng.standard_normal((hidden, classes)) * 3.0), False, False),
                     f32(rng.standard_normal(classes) * 0.3))
    logits.output(0).get_tensor().set_names({"logits"})
    seq_len = o6.ctc_greedy_decoder_seq_len(logits, lengths, None, True)
    tnc = ops.transpose(logits, ops.constant(np.array([1, 0, 2], np.int64)))
    greedy = o1.ctc_greedy_decoder(tnc, mask, True)
    xml = ov_save(tmp_path / "rec.xml", [logits, seq_len.output(0), seq_len.output(1), greedy],
                  [img, lengths, mask], compress_to_fp16=True)
    assert 'element_type="f16"' in xml.read_text() and 'type="LSTMSequence"' in xml.read_text()
    for seed in range(4):
        r = np.random.default_rng(seed)
        lens = np.array([t, r.integers(4, t)], np.int32)
        feeds = {"img": (r.standard_normal((n, 3, 8, t)) * 2).astype(np.float32), "lengths": lens,
                 "mask": (np.arange(t)[:, None] < lens[None, :]).astype(np.float32)}
        got, ov_out = run_onnx(xml, feeds), run_openvino(xml, feeds)
        want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
        np.testing.assert_allclose(got[0], ov_out[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
        top2 = np.sort(ov_out[0], axis=-1)[..., -2:]
        assert (top2[..., 1] - top2[..., 0]).min() > 1e-3  # no near-tie could flip a decoded class
        for g, o, w in zip(got[1:], ov_out[1:], want[1:]):
            assert_bitexact(g, o, "openvino")
            assert_bitexact(g, w, "oracle")
        decoded, count = got[1], got[2]
        assert (count >= 3).all() and (count < lens).any()  # non-trivial; blanks/repeats dropped
        for b in range(n):  # both decoders give the same sequence
            assert got[3][b, :count[b], 0, 0].tolist() == decoded[b, :count[b]].tolist()
            assert (got[3][b, count[b]:] == -1).all() and (decoded[b, count[b]:] == -1).all()
