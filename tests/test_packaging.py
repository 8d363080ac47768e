"""The package as ``pip install .`` installs it: a wheel carries the opset data, and a checkout's
root (whose ``ir2onnx/`` shadows the installed one) still finds its own ``opsets/``."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "decoder" / "decoder.xml"
# Run without the editable install's import hook, as after a plain `pip install .`.
PROGRAM = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
import ir2onnx
print(ir2onnx.__file__)
model = ir2onnx.convert(sys.argv[1])
assert len(model.graph.node) > 0
"""


def _wheel(tmp: Path) -> Path:
    """The wheel of this checkout, unpacked where pip would put it (a pure-Python wheel)."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp), str(ROOT)],
                   check=True, capture_output=True)
    site = tmp / "site"
    with zipfile.ZipFile(next(tmp.glob("ir2onnx-*.whl"))) as z:
        z.extractall(site)
    return site


def _run(cwd: Path, site: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run([sys.executable, "-c", PROGRAM, str(SAMPLE)], cwd=cwd, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_installed_package_and_checkout_root(tmp_path):
    """One test, so that parallel workers never build in the checkout at the same time."""
    site = _wheel(tmp_path)
    assert (site / "ir2onnx" / "_opsets" / "Reshape.json").is_file()
    assert (site / "ir2onnx" / "harness" / "report.schema.json").is_file()  # check's JSON report schema
    assert Path(_run(tmp_path, site)).is_relative_to(site)
    # `cd <repo> && python -c "import ir2onnx; ..."` imports the checkout's package, which has no
    # ir2onnx/_opsets: it must read opsets/ beside it (benchmarks/ and samples/ scripts too).
    assert Path(_run(ROOT, site)).is_relative_to(ROOT / "ir2onnx")
