"""Every kind of bad input: a one-line message on stderr, exit code 2, and no output file."""
from __future__ import annotations

import io
import random
import re
import zipfile

import numpy as np
import onnx
import pytest

from ir2onnx.cli.main import main
from ir2onnx.errors import Ir2OnnxError
from ir2onnx.ir import limits
from ir2onnx.runtime.array_files import read_npy, read_npz
from ir2onnx.testing import IRWriter
from util import convert_model


def _run_convert(capsys, xml, out, *extra):
    code = main(["convert", str(xml), "-o", str(out), *extra])
    err = capsys.readouterr().err.strip()
    return code, err


def _assert_refused(capsys, tmp_path, xml, pattern, *extra):
    out = tmp_path / "out.onnx"
    code, err = _run_convert(capsys, xml, out, *extra)
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("ir2onnx: error: ")
    assert "Traceback" not in err
    assert re.search(pattern, err), err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []  # no temp left


@pytest.fixture
def good(tmp_path):
    return convert_model(tmp_path / "m.xml")


def _edit(xml, old, new, count=1):
    text = xml.read_text()
    assert old in text, old
    xml.write_text(text.replace(old, new, count))
    return xml


def test_good_model_converts(capsys, tmp_path, good):
    code, err = _run_convert(capsys, good, tmp_path / "out.onnx")
    assert code == 0, err
    assert (tmp_path / "out.onnx").stat().st_size > 0


def test_malformed_xml(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, "<edges>", "<edges><oops>"), "not well-formed XML")


def test_truncated_xml(capsys, tmp_path, good):
    good.write_bytes(good.read_bytes()[:200])
    _assert_refused(capsys, tmp_path, good, "not well-formed XML")


def test_non_utf8(capsys, tmp_path, good):
    good.write_bytes(good.read_bytes().replace(b'name="tiny"', b'name="t\xffy"'))
    _assert_refused(capsys, tmp_path, good, "not UTF-8")


@pytest.mark.parametrize("doctype", [
    '<!DOCTYPE net [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>',
    '<!DOCTYPE net SYSTEM "http://example.invalid/evil.dtd">',
    '<!DOCTYPE net [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
])
def test_dtd_and_entities_refused(capsys, tmp_path, good, doctype):
    _edit(good, '<?xml version="1.0"?>\n', '<?xml version="1.0"?>\n' + doctype)
    _assert_refused(capsys, tmp_path, good, "DTDs and entities are not allowed")


def test_missing_bin(capsys, tmp_path, good):
    good.with_suffix(".bin").unlink()
    _assert_refused(capsys, tmp_path, good, r"weights file .* not found")


def test_missing_explicit_weights(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, good, r"weights file .* not found", "-w", str(tmp_path / "nope.bin"))


def test_short_bin(capsys, tmp_path, good):
    binf = good.with_suffix(".bin")
    binf.write_bytes(binf.read_bytes()[:5])
    _assert_refused(capsys, tmp_path, good, "beyond the end of")


def test_offset_beyond_bin(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, 'offset="0"', 'offset="1000"'), "beyond the end of")


def test_size_not_matching_shape(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, 'size="12"', 'size="10"'), "does not match shape")


def test_edge_to_unknown_layer(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, 'to-layer="2"', 'to-layer="99"'), "unknown layer id 99")


def test_edge_to_unknown_port(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, 'to-layer="2" to-port="0"', 'to-layer="2" to-port="7"'),
                    "has no input port 7")


def test_edge_from_unknown_port(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, 'from-layer="0" from-port="0"', 'from-layer="0" from-port="3"'),
                    "has no output port 3")


def test_input_without_edge(capsys, tmp_path, good):
    text = good.read_text()
    good.write_text(re.sub(r'<edge from-layer="0"[^>]*/>', "", text))
    _assert_refused(capsys, tmp_path, good, r"input port\(s\) \[0\] have no incoming edge")


def test_cycle(capsys, tmp_path):
    w = IRWriter("cyc")
    x = w.parameter([2], "f32", "x")
    a = w.layer("Convert", "opset1", [x], {"destination_type": "f32"}, [("f32", (2,))])[0]
    b = w.layer("Convert", "opset1", [a], {"destination_type": "f32"}, [("f32", (2,))])[0]
    w.result(b)
    w.edges[0] = (b.layer, b.port, a.layer, 0)  # a takes b's output: a -> b -> a
    _assert_refused(capsys, tmp_path, w.save(tmp_path / "c.xml"), "cycle through layers")


def test_duplicate_layer_ids(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, '<layer id="1"', '<layer id="0"'), "duplicate layer id 0")


def test_unknown_element_type(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, 'element_type="f16"', 'element_type="f17"'),
                    "element_type='f17' is not a valid etype")


def test_unknown_precision(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, 'precision="FP32"', 'precision="FP33"'), "unknown element type 'FP33'")


def test_negative_dim(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, 'shape="?,3"', 'shape="?,-3"'), "negative dimension -3")


def test_negative_port_dim(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, "<dim>3</dim>", "<dim>-5</dim>"), "negative dimension -5")


def test_absurd_const_shape_is_not_allocated(capsys, tmp_path, good):
    # 2^64 elements: must be refused by arithmetic on the declared size, never allocated
    _assert_refused(capsys, tmp_path, _edit(good, 'shape="2,3"', 'shape="4294967296,4294967296"'),
                    "does not match shape")


def test_absurd_dim_out_of_range(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, 'shape="?,3"', 'shape="?,99999999999999999999999"'),
                    "out of range")


def test_parameter_shape_disagrees_with_port(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, 'shape="?,3"', 'shape="?,3,5"'), "disagrees with its output port")


@pytest.mark.parametrize("command", ["run", "check"])
def test_absurd_parameter_shape_is_not_generated(capsys, tmp_path, command):
    # 1.6e10 elements (under the element limit), 32 GB of f16: `check` allocated them (MemoryError)
    xml = convert_model(tmp_path / "m.xml", shape=(40000, 40000, 10))
    code = main([command, str(xml), "--no-openvino"][:2 if command == "run" else 3])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "would need" in err and "over the limit of 4 GiB" in err, err
    assert len(err.splitlines()) == 1, err


def test_unknown_ir_version(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, 'version="11"', 'version="7"'), "IR version 7 is not supported")


def test_not_an_ir(capsys, tmp_path):
    xml = tmp_path / "x.xml"
    xml.write_text("<html><body/></html>")
    _assert_refused(capsys, tmp_path, xml, "root element is <html>")


def test_missing_model_file(capsys, tmp_path):
    _assert_refused(capsys, tmp_path, tmp_path / "none.xml", "not found")


def test_bad_attribute_value(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, 'destination_type="f32"', 'destination_type="banana"'),
                    r"'Convert_\d+' \(Convert-opset1, id=\d+\): attribute destination_type='banana'")


def test_missing_required_attribute(capsys, tmp_path, good):
    _assert_refused(capsys, tmp_path, _edit(good, ' destination_type="f32"', ""), "attribute 'destination_type' is required")


def test_every_unsupported_layer_listed_at_once(capsys, tmp_path):
    w = IRWriter("uns")
    x = w.parameter([2], "f32", "x")
    a = w.layer("Frobnicate", "opset1", [x], {}, [("f32", (2,))], name="frob")[0]
    b = w.layer("Convert", "opset99", [a], {"destination_type": "f32"}, [("f32", (2,))], name="conv99")[0]
    c = w.layer("Sqrt", "custom_ext", [b], {}, [("f32", (2,))], name="ext")[0]
    w.result(c)
    xml = w.save(tmp_path / "u.xml")
    _assert_refused(capsys, tmp_path, xml, r"3 layer\(s\) cannot be converted: 'frob' \(Frobnicate-opset1.*'conv99' \(Convert-opset99.*'ext' \(Sqrt-custom_ext")


def test_output_not_overwritten_on_error(capsys, tmp_path, good):
    out = tmp_path / "out.onnx"
    out.write_bytes(b"previous")
    _edit(good, 'size="12"', 'size="10"')
    assert main(["convert", str(good), "-o", str(out)]) == 2
    assert out.read_bytes() == b"previous"


def test_u1_const_into_onnx_names_the_layer(capsys, tmp_path):
    w = IRWriter("u1")
    c = w.const(np.array([1, 0, 1], np.uint8), etype="u1", name="bits")
    w.result(c)
    _assert_refused(capsys, tmp_path, w.save(tmp_path / "b.xml"), r"'bits' \(Const-opset1.*u1 has no ONNX counterpart")


def test_dynamic_rank_parameter_is_refused_clearly(capsys, tmp_path):
    w = IRWriter("dr")
    x = w.parameter(None, "f32", "x")
    y = w.layer("Convert", "opset1", [x], {"destination_type": "f16"}, [("f16", None)], out_names=["y"])[0]
    w.result(y)
    _assert_refused(capsys, tmp_path, w.save(tmp_path / "d.xml"), r"'x' \(Parameter-opset1.*dynamic rank")


def _ov_multiply_reshape(tmp_path):
    """x [3,4] -> Multiply -> Reshape([0,-1], special_zero) -> Result, written by OpenVINO."""
    import openvino.opset15 as ops

    from ir2onnx.testing import ov_parameter, ov_save

    x = ov_parameter([3, 4], name="x")
    m = ops.multiply(x, ops.constant(np.float32(2)), name="mul")
    y = ops.reshape(m, np.array([0, -1], np.int64), True, name="reshape")
    return ov_save(tmp_path / "mr.xml", y, [x])


def _edit_section(xml, layer_type, section, old, new):
    text = xml.read_text()
    i = text.index(f'type="{layer_type}"')
    j = text.index(f"<{section}>", i)
    k = text.index(f"</{section}>", j)
    xml.write_text(text[:j] + text[j:k].replace(old, new) + text[k:])


def test_declared_output_port_that_the_op_does_not_give_is_refused(capsys, tmp_path):
    # Regression: Multiply's output port edited from [3,4] to [2,6] (and its consumers along with
    # it) converted into a model that ran and returned [2,6]: the Reshape's copied dim 0 came from
    # the wrong declaration. OpenVINO recomputes [3,4]. Now the inconsistent layer is named.
    xml = _ov_multiply_reshape(tmp_path)
    for layer_type, section in (("Multiply", "output"), ("Reshape", "input"), ("Reshape", "output"),
                                ("Result", "input")):
        _edit_section(xml, layer_type, section, "<dim>3</dim>", "<dim>2</dim>")
        _edit_section(xml, layer_type, section, "<dim>4</dim>", "<dim>6</dim>")
    _assert_refused(capsys, tmp_path, xml, r"'mul' \(Multiply-opset1, id=\d+\): output port \d+ is "
                                           r"declared f32 \[2,6\], but the operation gives f32 \[3,4\]")


@pytest.mark.parametrize("old, new, gives", [("<dim>4</dim>", "<dim>7</dim>", r"f32 \[3,4\]"),
                                             ('precision="FP32"', 'precision="I32"', "f32")])
def test_wrong_output_port_of_the_last_layer_names_it(capsys, tmp_path, old, new, gives):
    # Regression: this gave "internal error: the ONNX model failed onnx.checker" without the layer.
    xml = _ov_multiply_reshape(tmp_path)
    _edit_section(xml, "Reshape", "output", old, new)
    _edit_section(xml, "Result", "input", old, new)
    _assert_refused(capsys, tmp_path, xml, r"'reshape' \(Reshape-opset1, id=\d+\): output port \d+ is "
                                           rf"declared .*, but the operation gives {gives}")


def test_input_port_disagreeing_with_its_producer_is_refused(capsys, tmp_path):
    xml = _ov_multiply_reshape(tmp_path)
    _edit_section(xml, "Reshape", "input", "<dim>4</dim>", "<dim>5</dim>")
    _assert_refused(capsys, tmp_path, xml, r"'reshape' \(Reshape-opset1, id=\d+\): input port 0 declares "
                                           r"dims \[3,5\], but its producer 'mul' \(output port \d+\) declares \[3,4\]")


def test_no_layers(capsys, tmp_path):
    """An IR with nothing in it: refused, not written as an empty ONNX model."""
    _assert_refused(capsys, tmp_path, IRWriter("empty").save(tmp_path / "e.xml"), "has no layers")


def test_no_result(capsys, tmp_path):
    w = IRWriter("no_result")
    x = w.parameter([2], "f32", "x")
    w.layer("Convert", "opset1", [x], {"destination_type": "f16"}, [("f16", (2,))])
    _assert_refused(capsys, tmp_path, w.save(tmp_path / "n.xml"), "has no Result layer")


# -- issue 30's reproducers: each was an internal error (exit 3) or silently accepted ----------
def _nested_if_xml(path, depth):
    """If inside If, ``depth`` deep (then: the next If; else: x as it is), written by hand."""
    param = ('<layer id="0" name="c" type="Parameter" version="opset1"><data shape="" element_type="boolean"/>'
             '<output><port id="0" precision="BOOL" names="c"/></output></layer>'
             '<layer id="1" name="x" type="Parameter" version="opset1"><data shape="2" element_type="f32"/>'
             '<output><port id="0" precision="FP32" names="x"><dim>2</dim></port></output></layer>')
    port = '<port id="0" precision="FP32"><dim>2</dim></port>'
    leaf = (f'<layers>{param}<layer id="2" name="r" type="Result" version="opset1"><input>{port}</input>'
            '</layer></layers><edges><edge from-layer="1" from-port="0" to-layer="2" to-port="0"/></edges>')

    def net(k):
        if k == 0:
            return leaf
        pm = ('<input external_port_id="1" internal_layer_id="0"/><input external_port_id="2" internal_layer_id="1"/>'
              '<output external_port_id="3" internal_layer_id="{}"/>')
        return (f'<layers>{param}<layer id="2" name="if{k}" type="If" version="opset8">'
                f'<then_port_map>{pm.format(3 if k > 1 else 2)}</then_port_map><else_port_map>{pm.format(2)}</else_port_map>'
                '<input><port id="0" precision="BOOL"/><port id="1" precision="BOOL"/>'
                '<port id="2" precision="FP32"><dim>2</dim></port></input>'
                '<output><port id="3" precision="FP32"><dim>2</dim></port></output>'
                f'<then_body>{net(k - 1)}</then_body><else_body>{leaf}</else_body></layer>'
                f'<layer id="3" name="r" type="Result" version="opset1"><input>{port}</input></layer></layers>'
                '<edges><edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>'
                '<edge from-layer="0" from-port="0" to-layer="2" to-port="1"/>'
                '<edge from-layer="1" from-port="0" to-layer="2" to-port="2"/>'
                '<edge from-layer="2" from-port="3" to-layer="3" to-port="0"/></edges>')

    path.write_text(f'<?xml version="1.0"?>\n<net name="nest" version="11">{net(depth)}</net>\n')
    return path


def _range_of_constants(tmp_path):
    """Range(0, 3 * 2^56, 1) of i64 Consts: the stop Const's offset moved onto other bytes."""
    w = IRWriter("rg")
    big = w.const(np.array(3 * 2**56, np.int64), name="junk")
    a, b, c = (w.const(np.array(v, np.int64), name=n) for v, n in ((0, "start"), (4, "stop"), (1, "step")))
    w.result(w.layer("Range", "opset4", [a, b, c], {"output_type": "i64"}, [("i64", (None,))], out_names=["y"])[0])
    w.result(w.layer("Convert", "opset1", [big], {"destination_type": "f32"}, [("f32", ())])[0])
    xml = w.save(tmp_path / "rg.xml")
    return _edit(xml, 'name="stop" type="Const" version="opset1"><data element_type="i64" shape="" offset="16"',
                 'name="stop" type="Const" version="opset1"><data element_type="i64" shape="" offset="0"')


def _parameter_result_without_precision(tmp_path):
    w = IRWriter("pr")
    w.result(w.parameter([2], "f32", "x"))
    xml = w.save(tmp_path / "p.xml")
    xml.write_text(xml.read_text().replace(' precision="FP32"', ""))
    return xml


def _npy_claiming(path, shape="(100000000000, 100000)"):
    """A 200-byte .npy whose header declares ``shape`` of f4."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape
    header = header.ljust(117) + "\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + bytes(72))
    return path


def _npz(path, **members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name + ".npy", data)
    return path


def _reader(make, *extra):
    return lambda tmp_path, good: ["convert", str(make(tmp_path, good)), "-o", str(tmp_path / "out.onnx"), *extra]


def _run(files=None, *extra, command="run"):
    """``command`` on the good model, after ``files(tmp_path, good)`` wrote what it needs."""
    def argv(tmp_path, good):
        more = files(tmp_path, good) if files else []
        return [command, str(good), *more, *extra] + (["--no-openvino", "--quiet"] if command == "check" else [])
    return argv


def _examples(data: bytes | None = None, make=None):
    def files(tmp_path, good):
        target = tmp_path / "m.inputs.npz"
        target.write_bytes(data) if make is None else make(target, tmp_path)
        return []
    return files


def _given(make):
    return lambda tmp_path, good: ["--input", f"x={make(tmp_path)}"]


def _write(name, data: bytes):
    def make(tmp_path):
        (tmp_path / name).write_bytes(data)
        return tmp_path / name
    return make


def _fp64_port(tmp_path, good):
    return _edit(good, '<output><port id="0" precision="FP16"><dim>2</dim>', '<output><port id="0" precision="FP64"><dim>2</dim>')


EXIT_3_AND_SILENT = [  # (id, argv(tmp_path, good model), what the one line says)
    ("const-version-unknown", _reader(lambda t, g: _edit(g, 'type="Const" version="opset1"', 'type="Const" version="opset99"')),
     r"'const1' \(Const-opset99, id=1\): Const version 'opset99' is unknown \(known: opset1\)"),
    ("const-version-missing", _reader(lambda t, g: _edit(g, 'type="Const" version="opset1"', 'type="Const"')),
     r"Const has no version \(known: opset1\)"),
    ("port-typed-against-const", _reader(_fp64_port), r"'const1'.*output port 0 is declared f64, but its element_type is f16"),
    ("check-agrees-with-convert", _run(lambda t, g: _fp64_port(t, g) and [], command="check"),
     r"'const1'.*output port 0 is declared f64, but its element_type is f16"),
    ("range-of-absurd-constants", _reader(lambda t, g: _range_of_constants(t)),
     r"'Range_\d+' \(Range-opset4.*216172782113783808 elements, over the limit of 68719476736 \(2\^36\)"),
    ("if-nested-40", _reader(lambda t, g: _nested_if_xml(t / "n.xml", 40)), r"nested 17 bodies deep, over the limit of 16"),
    ("if-nested-200", _reader(lambda t, g: _nested_if_xml(t / "n.xml", 200)), r"nested 17 bodies deep, over the limit of 16"),
    ("port-dim-2^40", _reader(lambda t, g: _edit(_edit(g, 'shape="?,3"', f'shape="?,{2**40}"'), "<dim>3</dim>", f"<dim>{2**40}</dim>")),
     r"'x' \(id=0\), port 0: dimension 1099511627776 is over the limit of 68719476736 \(2\^36\)"),
    ("path-component-over-255-bytes", lambda t, g: ["convert", str(t / ("a" * 300) / "m.xml")], r"cannot use the path .*: File name too long"),
    ("input-empty-npy", _run(_given(_write("e.npy", b""))), r"--input x '.*e\.npy' is an empty file \(0 bytes\), not a \.npy file"),
    ("input-not-a-zip-npz", _run(_given(_write("e.npz", b"not a zip"))), r"is a text file, not a \.npy file"),
    ("input-header-claims-huge", _run(_given(lambda t: _npy_claiming(t / "h.npy"))),
     r"h\.npy': dimension 100000000000 is over the limit of 68719476736"),
    ("input-header-claims-more-than-the-file", _run(_given(lambda t: _npy_claiming(t / "h.npy", "(200, 3)"))),
     r"h\.npy': its header declares float32 \[200, 3\] \(2400 bytes\), but only 72 bytes"),
    ("input-damaged-zip", _run(_given(_write("d.npz", b"PK\x03\x04" + bytes(40)))), r"d\.npz' is a damaged zip archive, not a \.npy file"),
    ("examples-damaged-zip", _run(_examples(b"PK\x03\x04" + bytes(40))), r"m\.inputs\.npz' is a damaged \.npz"),
    ("input-npz-for-npy", _run(_given(lambda t: _npz(t / "a.npz", x=b"") and t / "a.npz")),
     r"'.*a\.npz' is an \.npz archive \(zip\) of arrays x, not a \.npy file"),
    ("input-etc-passwd", _run(lambda t, g: ["--input", "x=/etc/passwd"]), r"'/etc/passwd' is a text file, not a \.npy file"),
    ("examples-empty", _run(_examples(b"")), r"example inputs '.*m\.inputs\.npz' is an empty file \(0 bytes\), not an \.npz archive"),
    ("examples-not-a-zip", _run(_examples(b"not a zip")), r"m\.inputs\.npz' is a text file, not an \.npz archive"),
    ("examples-header-claims-huge", _run(_examples(make=lambda p, t: _npz(p, x=_npy_claiming(t / "h.npy").read_bytes()))),
     r"member 'x\.npy': dimension 100000000000 is over the limit"),
    ("examples-empty-check", _run(_examples(b""), command="check"), r"is an empty file \(0 bytes\), not an \.npz archive"),
    ("seed-negative", _run(None, "--seed", "-1"), r"--seed must be >= 0, got -1"),
    ("seed-negative-check", _run(None, "--seed", "-1", command="check"), r"--seed must be >= 0, got -1"),
    ("check-shape-over-4-gib", _run(None, "--shape", "x=2000000000,3", command="check"),
     r"input 'x' of shape \[2000000000, 3\] would need 11\.2 GiB, over the limit of 4 GiB"),
    ("rtol-negative", _run(None, "--rtol", "-1", command="check"), r"rtol must be a finite number >= 0, got -1\.0"),
    ("atol-nan", _run(None, "--atol", "nan", command="check"), r"atol must be a finite number >= 0, got nan"),
    ("shape-contradicts-input", _run(lambda t, g: np.save(t / "x.npy", np.ones((2, 3), np.float16)) or
                                     ["--input", f"x={t / 'x.npy'}"], "--shape", "x=5,3"),
     r"input 'x' is given by --input \(shape \[2, 3\]\) and by --shape x=5,3"),
    ("examples-member-not-an-input", _run(_examples(make=lambda p, t: _npz(p, nope=bytes(10**6)))),
     r"m\.inputs\.npz' holds 'nope', which is not an input of the model \(inputs: x\)"),
]


@pytest.mark.parametrize("argv, pattern", [row[1:] for row in EXIT_3_AND_SILENT], ids=[row[0] for row in EXIT_3_AND_SILENT])
def test_issue_30_reproducers_exit_2_with_one_line(capsys, tmp_path, good, argv, pattern):
    args = argv(tmp_path, good)
    code = main(args)
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("ir2onnx: error: "), err
    assert re.search(pattern, err), err
    assert not (tmp_path / "out.onnx").exists()


def test_npz_members_are_checked_from_the_zip_directory_before_reading(capsys, tmp_path, good, monkeypatch):
    """A zip bomb (6 MB expanding to 6 GiB) is refused by the sizes its directory declares: here
    a 2 MiB member against a limit lowered to 1 MiB, refused before it is decompressed."""
    monkeypatch.setattr(limits, "MAX_INPUT_BYTES", 2**20)
    with zipfile.ZipFile(tmp_path / "m.inputs.npz", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("x.npy", bytes(2 * 2**20))  # not even a valid .npy: it must not be read
    assert main(["run", str(good)]) == 2
    err = capsys.readouterr().err.strip()
    assert re.search(r"m\.inputs\.npz' \(its members as declared\) would need 0\.0 GiB, over the limit", err), err


def test_a_port_without_precision_takes_its_element_type(capsys, tmp_path):
    # Regression: a Parameter (feeding a Result) whose port had no precision crashed the
    # converter (AttributeError); the port takes the Parameter's element_type.
    xml = _parameter_result_without_precision(tmp_path)
    code, err = _run_convert(capsys, xml, tmp_path / "out.onnx")
    assert code == 0, err
    model = onnx.load(str(tmp_path / "out.onnx"))
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT


def test_shape_that_agrees_with_input_is_taken(capsys, tmp_path, good):
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.float16))
    assert main(["run", str(good), "--input", f"x={tmp_path / 'x.npy'}", "--shape", "x=2,3"]) == 0
    assert "input x: shape [2, 3]" in capsys.readouterr().out


def test_mutated_array_files_only_ever_raise_ir2onnx_errors(tmp_path):
    """Seeded byte flips, truncations and insertions of a .npy and an .npz: each is read or
    refused with an Ir2OnnxError (a fuzz of these readers found numpy's header parser raising
    tokenize errors and zipfile raising zlib errors and NotImplementedError)."""
    rng = random.Random(0)
    sources = []
    for save in (np.save, np.savez, np.savez_compressed):
        buf = io.BytesIO()
        save(buf, np.arange(24, dtype=np.float32).reshape(2, 3, 4)) if save is np.save else save(buf, x=np.ones((2, 3)))
        sources.append(buf.getvalue())
    for i in range(300):
        data = bytearray(rng.choice(sources))
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(data) + 1)
            op = rng.random()
            if op < 0.5 and at < len(data):
                data[at] = rng.randrange(256)
            elif op < 0.75:
                del data[at:]
            else:
                data[at:at] = rng.choice([b"\xff" * 8, b"999999)", b"(1,1,1,)", b"'<U1'"])
        path = tmp_path / f"f{i}"
        path.write_bytes(bytes(data))
        for read in (lambda: read_npy(path, "f"), lambda: read_npz(path, ["x"], "f")):
            try:
                read()
            except Ir2OnnxError as e:
                assert "\n" not in str(e)


@pytest.mark.parametrize("precision", ['precision="UNDEFINED"', ""])
def test_a_result_fed_by_a_port_of_unknown_type(capsys, tmp_path, precision):
    """A Result whose input has no element type (its producer's port without a precision, or
    UNDEFINED, and nothing before it to decide one) is refused, naming the port (fuzz case 552:
    an AttributeError, exit 3, before)."""
    w = IRWriter("undefined")
    x = w.parameter([2, 3], "f32", "x")
    target = w.const(np.array([3, 2], np.int64))
    y = w.layer("Reshape", "opset1", [x, target], {"special_zero": False}, [("f32", [3, 2])], out_names=["y"])[0]
    w.result(y)
    xml = w.save(tmp_path / "m.xml")
    text = xml.read_text()
    reshape_out = '<port id="2" precision="FP32" names="y">'
    assert reshape_out in text
    xml.write_text(text.replace(reshape_out, f'<port id="2" {precision} names="y">'.replace("  ", " ")))
    _assert_refused(capsys, tmp_path, xml, r"Result.*the element type of its input is unknown: port 2 of layer")


def test_an_operand_of_unknown_type(capsys, tmp_path):
    """An elementwise layer fed by a port without a precision (the producer's type left open) is
    refused, not an AttributeError while naming the types (fuzz case 3240)."""
    w = IRWriter("open")
    x = w.parameter([2, 3], "f32", "x")
    c = w.const(np.full((2, 3), 2.0, np.float32))
    m = w.layer("Multiply", "opset1", [x, c], {"auto_broadcast": "numpy"}, [("f32", [2, 3])], name="mul")[0]
    y = w.layer("Minimum", "opset1", [m, x], {"auto_broadcast": "numpy"}, [("f32", [2, 3])], out_names=["y"])[0]
    w.result(y)
    xml = w.save(tmp_path / "m.xml")
    text = xml.read_text()
    mul_out = '<output><port id="2" precision="FP32"><dim>2</dim><dim>3</dim></port></output></layer>'
    assert text.count(mul_out) >= 1
    xml.write_text(text.replace(mul_out, mul_out.replace(' precision="FP32"', ""), 1))
    _assert_refused(capsys, tmp_path, xml, r"Minimum.*element type of an operand is unknown")
