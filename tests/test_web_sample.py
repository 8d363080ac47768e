"""samples/web: the converted detector runs in a real browser. The page (onnxruntime-web, wasm)
is served on 127.0.0.1 and opened in headless chromium (Debian's chromium and chromium-driver,
driven by selenium: the ``web`` extra); the boxes it draws, read back from its JSON, are the ones
onnxruntime's CPU provider finds on the same pixels.

Slow (a browser start); needs ``npm ci --prefix samples/web`` first, as .ci/run does.
``IR2ONNX_WEB_SCREENSHOT=docs/web-sample.png`` also writes the canvas, as docs/web.md shows it.
"""
from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

from ir2onnx.api import convert_file
from ir2onnx.runtime.sessions import run, session

pytestmark = pytest.mark.slow

WEB = Path(__file__).resolve().parent.parent / "samples" / "web"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PAGE_FILES = ("index.html", "app.js", "astronaut.png")
THRESHOLD = 0.5  # app.js draws the boxes scoring at least this


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # noqa: D102  (no access log in the test output)
        pass


@contextlib.contextmanager
def _serve(folder: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def _site(tmp_path: Path) -> Path:
    """The page, its image and onnxruntime-web, with detector.onnx converted from the IR now."""
    dist = WEB / "node_modules" / "onnxruntime-web" / "dist" / "ort.wasm.min.mjs"
    assert dist.is_file(), "onnxruntime-web is not installed: run npm ci --prefix samples/web"
    site = tmp_path / "site"
    site.mkdir()
    for name in PAGE_FILES:
        shutil.copy(WEB / name, site / name)
    (site / "node_modules").symlink_to(WEB / "node_modules", target_is_directory=True)
    convert_file(WEB / "detector.xml", site / "detector.onnx")
    return site


def _browser_result(url: str, screenshot: str | None) -> dict:
    from selenium import webdriver  # the web extra
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=600,760"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get(url)
        WebDriverWait(driver, 120).until(lambda d: d.find_element(By.ID, "result").text.strip())
        result = json.loads(driver.find_element(By.ID, "result").text)
        if screenshot:
            driver.find_element(By.ID, "view").screenshot(screenshot)
        return result
    finally:
        driver.quit()


def _cpu_boxes(model: Path, x: np.ndarray) -> np.ndarray:
    sess = session(model, "cpu")
    rows = next(iter(run(sess, {sess.get_inputs()[0].name: x}).values())).reshape(-1, 7)
    return rows[(rows[:, 0] >= 0) & (rows[:, 2] >= THRESHOLD)]


def test_page_draws_onnxruntime_cpu_boxes(tmp_path):
    site = _site(tmp_path)
    with _serve(site) as base:
        result = _browser_result(f"{base}/index.html", os.environ.get("IR2ONNX_WEB_SCREENSHOT"))
    assert result["status"] == "done", result.get("message")

    x = np.load(WEB / "detector.inputs.npz")["img"]  # astronaut.png's pixels, BGR NCHW
    weights = (np.arange(x.size) % 97 + 1).astype(np.float64)
    assert result["input_checksum"] == float(x.ravel().astype(np.float64) @ weights), \
        "the browser read other pixels than detector.inputs.npz holds"

    expected = _cpu_boxes(site / "detector.onnx", x)
    got = np.array([[0, b["label"], b["score"], b["x0"], b["y0"], b["x1"], b["y1"]] for b in result["boxes"]],
                   np.float32).reshape(-1, 7)
    assert len(expected) == 1, "the sample's detector finds one face on the photograph"
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    # and that box is the face: it holds the point between the eyes
    x0, y0, x1, y1 = got[0, 3:]
    assert x0 < 0.45 < x1 and y0 < 0.25 < y1


def test_page_reports_a_missing_model(tmp_path):
    """A page that cannot load its model says so in its JSON instead of drawing nothing."""
    site = _site(tmp_path)
    (site / "detector.onnx").unlink()
    with _serve(site) as base:
        result = _browser_result(f"{base}/index.html", None)
    assert result["status"] == "error"
    assert "detector.onnx" in result["message"]
