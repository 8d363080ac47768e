"""The reports of `ir2onnx check`: the JSON schema, Markdown, and the HTML report with its plots."""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import ir2onnx
from ir2onnx.cli.main import main
from ir2onnx.harness.html_report import to_html
from ir2onnx.harness.report_plots import image_input, is_detection_output
from ir2onnx.harness.report import SCHEMA_PATH, to_dict, to_markdown, write_report

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SSD = SAMPLES / "ssd" / "ssd.xml"


@pytest.fixture(scope="module")
def ssd_result():
    """The bundled detector on its fixed image (batch 2), every backend."""
    return ir2onnx.check(SSD, inputs={"img": np.load(SAMPLES / "ssd" / "img.npy")})


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(json.loads(SCHEMA_PATH.read_text()))


def _validate(report: dict) -> None:
    jsonschema.validate(report, json.loads(SCHEMA_PATH.read_text()))


# -- JSON --------------------------------------------------------------------------------------
def test_json_report_follows_its_schema(ssd_result, tmp_path):
    path = write_report(ssd_result, tmp_path / "r.json")
    report = json.loads(path.read_text())
    _validate(report)
    assert report["ok"] is ssd_result.ok
    out = report["outputs"][0]
    assert out["verdict"] == ("pass" if out["passed"] else "fail") and out["comparisons"]


def test_json_report_without_comparisons_does_not_say_passed(tmp_path):
    """One backend: nothing compared. The output is 'not compared' (passed false), ok false."""
    result = ir2onnx.check(SSD, inputs={"img": np.load(SAMPLES / "ssd" / "img.npy")},
                           oracle=False, openvino=False)
    report = json.loads(json.dumps(to_dict(result), default=str))
    _validate(report)
    assert report["ok"] is False and report["failures"]
    assert {(o["verdict"], o["passed"], len(o["comparisons"])) for o in report["outputs"]} == {
        ("not compared", False, 0)}


def test_schema_rejects_contradictions(ssd_result):
    report = json.loads(json.dumps(to_dict(ssd_result), default=str))
    bad = json.loads(json.dumps(report))
    bad["outputs"][0]["comparisons"] = []  # "pass" with nothing compared
    with pytest.raises(jsonschema.ValidationError):
        _validate(bad)
    bad = json.loads(json.dumps(report))
    bad["ok"], bad["failures"] = False, []  # FAIL without a reason
    with pytest.raises(jsonschema.ValidationError):
        _validate(bad)


# -- Markdown ----------------------------------------------------------------------------------
def test_markdown_names_the_model_by_path_and_lists_the_inputs(ssd_result):
    md = to_markdown(ssd_result)
    assert md.splitlines()[0].startswith(f"### ir2onnx check: `{ssd_result.model}`")
    assert "| input | shape | dtype | origin |" in md
    assert "| img | [2,3,64,64] | float32 | given |" in md


# -- HTML --------------------------------------------------------------------------------------
def test_html_report_is_one_file_with_plots_and_boxes(ssd_result):
    page = to_html(ssd_result)
    images = re.findall(r'<img alt="([^"]*)" src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    alts = [a for a, _ in images]
    assert "error histogram of detections" in alts
    assert any(a.endswith("against openvino for detections") for a in alts)
    assert "detections: boxes of each backend" in alts
    assert all(b64.startswith("iVBORw0KGgo") for _, b64 in images)  # PNG signature
    assert not re.search(r'(src|href)="(?!data:)', page)  # nothing fetched
    assert "<code>img</code>" in page and "[2,3,64,64]" in page


def test_html_report_shows_whatever_a_comparison_holds(ssd_result, monkeypatch):
    """A rule given as a name and its numbers (a task-level rule): both appear in the table."""
    c = ssd_result.outputs[0].comparisons[0]
    plain = c.to_dict()
    monkeypatch.setattr(type(c), "to_dict", lambda self: {
        **plain, "rule": {"name": "detections", "unmatched": 0, "worst_iou": 0.97}, "matched": 12})
    page = to_html(ssd_result)
    row = next(r for r in page.split("<tr>") if "detections</td>" in r)
    assert "unmatched 0" in row and "worst_iou 0.97" in row and "matched 12" in row


def test_detections_and_image_inputs_are_recognised(ssd_result):
    assert is_detection_output(np.zeros((1, 1, 5, 7), np.float32))
    assert not is_detection_output(np.zeros((1, 1, 5, 5), np.float32))
    name, img = image_input(ssd_result)
    assert name == "img" and img.shape == (64, 64, 3) and 0 <= img.min() <= img.max() <= 1


def test_html_report_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "sub" / "r.html"
    assert main(["check", str(SSD), "--input", f"img={SAMPLES / 'ssd' / 'img.npy'}", "--quiet", "--no-openvino",
                 "--report", str(out)]) == 0
    page = out.read_text()
    assert page.startswith("<!doctype html>") and page.count("data:image/png;base64,") >= 3


def test_html_report_without_matplotlib_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    out = tmp_path / "r.html"
    assert main(["check", str(SSD), "--quiet", "--report", str(out)]) == 2
    err = capsys.readouterr().err
    assert "matplotlib" in err and "ir2onnx[report]" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.slow
def test_html_report_renders_in_headless_chromium(ssd_result, tmp_path):
    """The page in a real browser (Debian's chromium through its chromedriver; CI installs both):
    no console error, every image decoded. A broken page, opened the same way, shows both checks
    can fail."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    good, broken = tmp_path / "r.html", tmp_path / "broken.html"
    good.write_text(to_html(ssd_result))
    broken.write_text('<!doctype html><title>b</title><img alt="x" src="data:image/png;base64,iVBORw0KGgo=">'
                      '<script>console.error("boom")</script>')
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"),
                              options=opts)
    seen = {}
    try:
        for page in (good, broken):
            driver.get(page.as_uri())
            images = driver.execute_script(
                "return [...document.images].map(i => [i.alt, i.complete, i.naturalWidth])")
            seen[page.name] = (driver.title, [e for e in driver.get_log("browser") if e["level"] == "SEVERE"],
                               images)
    finally:
        driver.quit()
    title, errors, images = seen["r.html"]
    assert title == "ir2onnx check: ssd.xml — PASS"
    assert errors == []
    assert len(images) >= 3 and all(done and width > 100 for _, done, width in images)
    _, errors, images = seen["broken.html"]
    assert any("boom" in e["message"] for e in errors) and images[0][2] == 0
