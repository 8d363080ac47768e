"""The ONNX writer: streamed single file, external data, IR version per opset, atomic output."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import ir2onnx
from ir2onnx.lowering.convert import MIN_OPSET, convert_graph, max_opset
from ir2onnx.runtime.sessions import ort_max_opset
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


def _scatter_max_ir(tmp_path, layers=2):
    """``layers`` ScatterElementsUpdate-12 reduction=max in a chain: ONNX needs opset 18 for them."""
    from openvino import opset12 as ops

    from ir2onnx.testing import ov_parameter, ov_save

    x = ov_parameter([4], np.float32, "x")
    y = x
    for _ in range(layers):
        y = ops.scatter_elements_update(y, ops.constant(np.array([0])), ops.constant(np.array([1], np.float32)),
                                        ops.constant(0), "max")
    s = ops.scatter_elements_update(x, ops.constant(np.array([1])), ops.constant(np.array([2], np.float32)),
                                    ops.constant(0), "sum")  # needs 16: the highest need wins
    return ov_save(tmp_path / "m.xml", [y, s], [x])


def test_opset_chosen_is_the_lowest_every_layer_needs(tmp_path):
    assert convert_graph(ir2onnx.load_ir(_weights_ir(tmp_path, n=4))).opset == 17
    conv = convert_graph(ir2onnx.load_ir(_scatter_max_ir(tmp_path)))
    assert conv.opset == 18
    assert [(o.domain, o.version) for o in conv.model.opset_import] == [("", 18)]
    assert ir2onnx.convert(_scatter_max_ir(tmp_path)).opset_import[0].version == 18


def test_forced_opset_refuses_every_layer_that_needs_more(tmp_path):
    from ir2onnx.errors import NeedsOpset, UnsupportedLayers

    xml = _scatter_max_ir(tmp_path, layers=1)
    with pytest.raises(UnsupportedLayers) as e:
        ir2onnx.convert(xml, opset=15)
    assert sorted(p.opset for p in e.value.errors) == [16, 18]
    assert all(isinstance(p, NeedsOpset) for p in e.value.errors)
    assert "opset >= 18" in str(e.value) and "opset >= 16" in str(e.value)
    assert convert_graph(ir2onnx.load_ir(xml), 19).opset == 19  # forced above the need: kept


def test_opset_chosen_never_exceeds_what_onnxruntime_loads(tmp_path, monkeypatch):
    import ir2onnx.runtime.sessions as runtime
    from ir2onnx.errors import NeedsOpset

    monkeypatch.setattr(runtime, "_ORT_MAX_OPSET", 17)  # as if onnxruntime loaded up to 17 only
    with pytest.raises(NeedsOpset, match="needs ONNX opset >= 18, newer than onnxruntime") as e:
        ir2onnx.convert(_scatter_max_ir(tmp_path, layers=1))
    assert e.value.opset == 18
    with pytest.raises(ir2onnx.errors.UnsupportedLayers, match="newer than onnxruntime"):
        ir2onnx.convert(_two_needs(tmp_path))


def _two_needs(tmp_path):
    """Two independent layers that need opset 18."""
    from openvino import opset12 as ops

    from ir2onnx.testing import ov_parameter, ov_save

    x = ov_parameter([4], np.float32, "x")
    ys = [ops.scatter_elements_update(x, ops.constant(np.array([i])), ops.constant(np.array([1], np.float32)),
                                      ops.constant(0), "max") for i in range(2)]
    return ov_save(tmp_path / "two.xml", ys, [x])
