"""Broken sub-graphs of OpenVINO-written Loop and If IRs: one line on stderr, exit code 2, nothing
written (as tests/test_bad_input.py for the top level)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ir2onnx.cli.main import main
from ir2onnx.selftest.cases import ov_build
from ir2onnx.selftest.control_flow import if_model, loop_model


def _refused(capsys, tmp_path, xml, pattern):
    out = tmp_path / "out.onnx"
    code = main(["convert", str(xml), "-o", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("ir2onnx: error: "), err
    assert re.search(pattern, err), err
    assert not out.exists()


def _edit(xml, old, new):
    text = xml.read_text()
    assert old in text, old
    xml.write_text(text.replace(old, new, 1))
    return xml


@pytest.fixture
def loop_xml(tmp_path):
    return ov_build(loop_model(4))(tmp_path / "ir")


@pytest.fixture
def if_xml(tmp_path):
    return ov_build(if_model())(tmp_path / "ir")


def test_the_unedited_models_convert(capsys, tmp_path, loop_xml, if_xml):
    for xml in (loop_xml, if_xml):
        assert main(["convert", str(xml), "-o", str(tmp_path / "ok.onnx")]) == 0


def test_missing_body(capsys, tmp_path, loop_xml):
    text = loop_xml.read_text().replace("<body>", "<corpse>").replace("</body>", "</corpse>")
    loop_xml.write_text(text)
    _refused(capsys, tmp_path, loop_xml, r"Loop_\d+.*has no <body>")


def test_missing_else_body(capsys, tmp_path, if_xml):
    text = if_xml.read_text().replace("<else_body>", "<other>").replace("</else_body>", "</other>")
    if_xml.write_text(text)
    _refused(capsys, tmp_path, if_xml, r"has no <else_body>")


def test_port_map_names_a_missing_outer_port(capsys, tmp_path, loop_xml):
    _edit(loop_xml, '<input external_port_id="2"', '<input external_port_id="17"')
    _refused(capsys, tmp_path, loop_xml, r"external port 17, which is not an input port")


def test_port_map_names_a_missing_body_layer(capsys, tmp_path, loop_xml):
    _edit(loop_xml, 'external_port_id="2" internal_layer_id="0"', 'external_port_id="2" internal_layer_id="42"')
    _refused(capsys, tmp_path, loop_xml, r"internal layer 42, which is not a Parameter of the body")


def test_port_map_output_to_a_non_result(capsys, tmp_path, loop_xml):
    _edit(loop_xml, '<output external_port_id="4" internal_layer_id="8"', '<output external_port_id="4" internal_layer_id="5"')
    _refused(capsys, tmp_path, loop_xml, r"internal layer 5, which is not a Result")


def test_port_map_bad_number(capsys, tmp_path, loop_xml):
    _edit(loop_xml, 'start="0" end="-1" stride="1"', 'start="zero" end="-1" stride="1"')
    _refused(capsys, tmp_path, loop_xml, r"port map start 'zero' is not an integer")


def test_port_map_zero_stride(capsys, tmp_path, loop_xml):
    _edit(loop_xml, 'start="0" end="-1" stride="1"', 'start="0" end="-1" stride="0"')
    _refused(capsys, tmp_path, loop_xml, r"stride 0")


def test_unfed_body_parameter(capsys, tmp_path, loop_xml):
    _edit(loop_xml, '<input external_port_id="2" internal_layer_id="0" />', '')
    _refused(capsys, tmp_path, loop_xml, r"body Parameter .* is fed by no port map rule")


def test_output_port_without_a_body_result(capsys, tmp_path, loop_xml):
    _edit(loop_xml, '<output external_port_id="4" internal_layer_id="8" />', '')
    _refused(capsys, tmp_path, loop_xml, r"every output port exactly one body Result")


def test_back_edge_into_a_non_parameter(capsys, tmp_path, loop_xml):
    _edit(loop_xml, '<edge from-layer="8" to-layer="2" />', '<edge from-layer="8" to-layer="5" />')
    _refused(capsys, tmp_path, loop_xml, r"back edge 8 -> 5 must go from a body Result to a body Parameter")


def test_cycle_inside_a_body(capsys, tmp_path, loop_xml):
    _edit(loop_xml, '<edge from-layer="2" from-port="0" to-layer="5" to-port="0" />',
          '<edge from-layer="5" from-port="2" to-layer="5" to-port="0" />')
    _refused(capsys, tmp_path, loop_xml, r"cycle through layers 'Add_\d+'")


def test_body_edge_to_a_missing_layer(capsys, tmp_path, loop_xml):
    _edit(loop_xml, '<edge from-layer="6" from-port="0" to-layer="7" to-port="0" />',
          '<edge from-layer="66" from-port="0" to-layer="7" to-port="0" />')
    _refused(capsys, tmp_path, loop_xml, r"unknown layer id 66")


def test_a_body_on_a_layer_that_takes_none(capsys, tmp_path, if_xml):
    text = if_xml.read_text()
    at = text.index('type="Negative"')
    end = text.index("</layer>", at)
    if_xml.write_text(text[:end] + "<body><layers/><edges/></body>" + text[end:])
    _refused(capsys, tmp_path, if_xml, r"has a <body>, but Negative takes no sub-graph")


def test_body_port_that_disagrees_with_its_producer(capsys, tmp_path, loop_xml):
    text = loop_xml.read_text()
    body = text.index("<body>")
    at = text.index('type="Result"', body)
    dim = text.index("<dim>3</dim>", at)
    loop_xml.write_text(text[:dim] + "<dim>7</dim>" + text[dim + len("<dim>3</dim>"):])
    _refused(capsys, tmp_path, loop_xml, r"Result_\d+.*input port 0 declares dims \[1,7\]")


def test_execution_condition_that_is_not_boolean(capsys, tmp_path):
    """A hand-made Loop whose execution_condition Result is f32: refused, naming the Loop."""
    from ir2onnx.testing import IRWriter

    body = IRWriter("body")
    bx = body.parameter([1, 3], "f32", "bx")
    body.result(bx)
    body.result(body.const(np.ones((), np.float32)))  # its bytes: read from m.bin, never run
    w = IRWriter("m")
    x = w.parameter([1, 3], "f32", "x")
    trip, cond = w.const(np.array(2, np.int64)), w.const(np.array(True))
    y, = w.layer("Loop", "opset5", [trip, cond, x], {}, [("f32", (1, 3))], out_names=["y"])
    w.result(y)
    xml = w.xml()
    inner = body.xml().split("<net", 1)[1].split(">", 1)[1].rsplit("</net>", 1)[0]
    pm = ('<port_map><input external_port_id="2" internal_layer_id="0"/>'
          '<output external_port_id="3" internal_layer_id="1"/>'
          '<output external_port_id="-1" internal_layer_id="3" purpose="execution_condition"/>'
          '</port_map>')
    xml = xml.replace('type="Loop" version="opset5">', f'type="Loop" version="opset5">{pm}<body>{inner}</body>', 1)
    path = tmp_path / "m.xml"
    path.write_text(xml)
    (tmp_path / "m.bin").write_bytes(bytes(w.bin))
    _refused(capsys, tmp_path, path, r"Loop.*execution condition must be one boolean, the body gives f32")
