"""Broken sub-graphs of OpenVINO-written Loop and If IRs: one line on stderr, exit code 2, nothing
written (as tests/test_bad_input.py for the top level)."""
from __future__ import annotations

import numpy as np
import pytest

from ir2onnx.cli.main import main
from ir2onnx.selftest.cases import ov_build
from ir2onnx.selftest.control_flow import if_model, loop_model
from util import assert_refused, edit_text


@pytest.fixture
def loop_xml(tmp_path):
    return ov_build(loop_model(4))(tmp_path / "ir")


@pytest.fixture
def if_xml(tmp_path):
    return ov_build(if_model())(tmp_path / "ir")


def test_the_unedited_models_convert(capsys, tmp_path, loop_xml, if_xml):
    for xml in (loop_xml, if_xml):
        assert main(["convert", str(xml), "-o", str(tmp_path / "ok.onnx")]) == 0


# (model, [(old, new, count)], the refusal): each edit of the model OpenVINO wrote is refused with
# one line that says what is wrong, naming the layer or the rule
EDITS = {
    "missing body": ("loop", [("<body>", "<corpse>", -1), ("</body>", "</corpse>", -1)], r"Loop_\d+.*has no <body>"),
    "missing else_body": ("if", [("<else_body>", "<other>", -1), ("</else_body>", "</other>", -1)],
                          r"has no <else_body>"),
    "port map names a missing outer port": (
        "loop", [('<input external_port_id="2"', '<input external_port_id="17"', 1)],
        r"external port 17, which is not an input port"),
    "port map names a missing body layer": (
        "loop", [('external_port_id="2" internal_layer_id="0"', 'external_port_id="2" internal_layer_id="42"', 1)],
        r"internal layer 42, which is not a Parameter of the body"),
    "port map output to a non-Result": (
        "loop", [('<output external_port_id="4" internal_layer_id="8"', '<output external_port_id="4" internal_layer_id="5"', 1)],
        r"internal layer 5, which is not a Result"),
    "port map bad number": ("loop", [('start="0" end="-1" stride="1"', 'start="zero" end="-1" stride="1"', 1)],
                            r"port map start 'zero' is not an integer"),
    "port map zero stride": ("loop", [('start="0" end="-1" stride="1"', 'start="0" end="-1" stride="0"', 1)], r"stride 0"),
    "unfed body Parameter": ("loop", [('<input external_port_id="2" internal_layer_id="0" />', '', 1)],
                             r"body Parameter .* is fed by no port map rule"),
    "output port without a body Result": ("loop", [('<output external_port_id="4" internal_layer_id="8" />', '', 1)],
                                          r"every output port exactly one body Result"),
    "back edge into a non-Parameter": ("loop", [('<edge from-layer="8" to-layer="2" />', '<edge from-layer="8" to-layer="5" />', 1)],
                                       r"back edge 8 -> 5 must go from a body Result to a body Parameter"),
    "cycle inside a body": ("loop", [('<edge from-layer="2" from-port="0" to-layer="5" to-port="0" />',
                                      '<edge from-layer="5" from-port="2" to-layer="5" to-port="0" />', 1)],
                            r"cycle through layers 'Add_\d+'"),
    "body edge to a missing layer": ("loop", [('<edge from-layer="6" from-port="0" to-layer="7" to-port="0" />',
                                               '<edge from-layer="66" from-port="0" to-layer="7" to-port="0" />', 1)],
                                     r"unknown layer id 66"),
}


@pytest.mark.parametrize("case", list(EDITS))
def test_an_edited_sub_graph_isassert_refused(capsys, tmp_path, request, case):
    model, edits, refusal = EDITS[case]
    xml = request.getfixturevalue(f"{model}_xml")
    for old, new, count in edits:
        edit_text(xml, old, new, count)
    assert_refused(capsys, tmp_path, xml, refusal)


def test_a_body_on_a_layer_that_takes_none(capsys, tmp_path, if_xml):
    text = if_xml.read_text()
    at = text.index('type="Negative"')
    end = text.index("</layer>", at)
    if_xml.write_text(text[:end] + "<body><layers/><edges/></body>" + text[end:])
    assert_refused(capsys, tmp_path, if_xml, r"has a <body>, but Negative takes no sub-graph")


def test_body_port_that_disagrees_with_its_producer(capsys, tmp_path, loop_xml):
    text = loop_xml.read_text()
    body = text.index("<body>")
    at = text.index('type="Result"', body)
    dim = text.index("<dim>3</dim>", at)
    loop_xml.write_text(text[:dim] + "<dim>7</dim>" + text[dim + len("<dim>3</dim>"):])
    assert_refused(capsys, tmp_path, loop_xml, r"Result_\d+.*input port 0 declares dims \[1,7\]")


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
    assert_refused(capsys, tmp_path, path, r"Loop.*execution condition must be one boolean, the body gives f32")
