"""The ONNX writer: streamed single file, external data, IR version per opset, atomic output."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import ir2onnx
from ir2onnx.lowering.convert import MIN_OPSET, convert_graph, max_opset
from ir2onnx.runtime import ort_max_opset
from ir2onnx.testing import IRWriter, assert_bitexact
from ir2onnx.writer import save


def _weights_ir(tmp_path, n=3000):
    w = IRWriter("weights")
    x = w.parameter([None, n], "f16", "x")
    big = w.const(np.linspace(-3, 3, 2 * n, dtype=np.float32).reshape(2, n), name="big")
    small = w.const(np.array([1, 2, 3], np.int64), name="small")
    y = w.layer("Convert", "opset1", [x], {"destination_type": "f32"}, [("f32", (None, n))], out_names=["y"])[0]
    w.result(y)
    w.result(big)
    w.result(small)
    return w.save(tmp_path / "w.xml")


def test_streamed_file_equals_in_memory_model(tmp_path):
    xml = _weights_ir(tmp_path)
    conv = convert_graph(ir2onnx.load_ir(xml))
    out = save(conv, tmp_path / "m.onnx")
    assert onnx.load(str(out)) == conv.to_model_proto()
    assert onnx.load(str(out)) == ir2onnx.convert(xml)


def test_external_data(tmp_path):
    xml = _weights_ir(tmp_path)
    out = ir2onnx.convert_file(xml, tmp_path / "e.onnx", external_data=True)
    data = tmp_path / "e.onnx.data"
    assert data.stat().st_size >= 2 * 3000 * 4
    m = onnx.load(str(out), load_external_data=False)
    big = next(t for t in m.graph.initializer if t.name == "big")
    small = next(t for t in m.graph.initializer if t.name == "small")
    assert big.data_location == onnx.TensorProto.EXTERNAL and not big.raw_data
    assert small.data_location != onnx.TensorProto.EXTERNAL  # small tensors stay inline
    onnx.checker.check_model(str(out), full_check=True)
    sess = ort.InferenceSession(str(out))
    x = np.ones((1, 3000), np.float16)
    _, b, s = sess.run(None, {"x": x})
    assert_bitexact(b, np.linspace(-3, 3, 6000, dtype=np.float32).reshape(2, 3000))
    assert_bitexact(s, np.array([1, 2, 3], np.int64))


def test_no_leftovers_and_atomic_replace(tmp_path):
    xml = _weights_ir(tmp_path)
    out = tmp_path / "m.onnx"
    out.write_bytes(b"old")
    ir2onnx.convert_file(xml, out)
    assert out.read_bytes() != b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx", "w.bin", "w.xml"]


@pytest.mark.parametrize("opset", range(MIN_OPSET, max_opset() + 1))
def test_ir_version_is_the_lowest_the_opset_needs(tmp_path, opset):
    xml = _weights_ir(tmp_path, n=4)
    out = ir2onnx.convert_file(xml, tmp_path / "m.onnx", opset=opset)
    m = onnx.load(str(out))
    ids = [onnx.helper.make_opsetid("", opset)]
    assert m.ir_version == onnx.helper.find_min_ir_version_for(ids)
    assert [(o.domain, o.version) for o in m.opset_import] == [("", opset)]
    if opset <= ort_max_opset(max_opset()):
        ort.InferenceSession(str(out))  # the installed onnxruntime loads what we write


def test_default_opset_is_17(tmp_path):
    m = onnx.load(str(ir2onnx.convert_file(_weights_ir(tmp_path), tmp_path / "m.onnx")))
    assert m.opset_import[0].version == 17 and m.ir_version == 8


def test_opset_out_of_range(tmp_path):
    with pytest.raises(ir2onnx.errors.Ir2OnnxError, match="opset 13 is not supported"):
        ir2onnx.convert(_weights_ir(tmp_path), opset=13)


def test_models_over_the_protobuf_limit_get_external_data(tmp_path, monkeypatch, capsys):
    import ir2onnx.writer as writer

    xml = _weights_ir(tmp_path)
    monkeypatch.setattr(writer, "PROTOBUF_LIMIT", 64 * 2**20 + 1000)  # as if the model were > 2 GiB
    out = ir2onnx.convert_file(xml, tmp_path / "auto.onnx")
    assert (tmp_path / "auto.onnx.data").is_file()
    assert "writing them to auto.onnx.data" in capsys.readouterr().err
    with pytest.raises(ir2onnx.errors.Ir2OnnxError, match="cannot be one file"):
        ir2onnx.convert_file(xml, tmp_path / "single.onnx", external_data=False)
    assert not (tmp_path / "single.onnx").exists()
    sess = ort.InferenceSession(str(out))
    assert_bitexact(sess.run(None, {"x": np.ones((1, 3000), np.float16)})[1],
                    np.linspace(-3, 3, 6000, dtype=np.float32).reshape(2, 3000))


def test_progress_is_reported_for_big_weights(tmp_path, monkeypatch, capsys):
    import ir2onnx.writer as writer

    monkeypatch.setattr(writer.Progress, "MIN_BYTES", 1000)
    ir2onnx.convert_file(_weights_ir(tmp_path), tmp_path / "p.onnx")
    err = capsys.readouterr().err
    assert "writing weights" in err and "(100%)" in err


def test_registering_a_key_twice_is_an_error():
    from ir2onnx.lowering.registry import LOWERINGS, lowers

    with pytest.raises(RuntimeError, match="two lowerings registered for Convert-opset1"):
        lowers("Convert", "opset1")(lambda ctx, layer, inputs: [])
    assert LOWERINGS[("Convert", "opset1")].__module__ == "ir2onnx.ops.conversion"
