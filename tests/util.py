"""Small IR models and checks shared by several test modules."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops

import ir2onnx
from ir2onnx.cli.main import main as cli_main
from ir2onnx.oracles.interpreter import evaluate
from ir2onnx.testing import IRWriter, assert_bitexact, ov_save, run_onnx, run_openvino


def convert_model(path, src="f16", dst="f32", shape=(None, 3), const_shape=(2, 3)):
    """x -> Convert(dst) -> y, and a Const(src) -> Convert(dst) -> w; saved at ``path``."""
    w = IRWriter("tiny")
    x = w.parameter(list(shape), src, "x")
    c = w.const(np.arange(np.prod(const_shape)).reshape(const_shape).astype(np.float16))
    y = w.layer("Convert", "opset1", [x], {"destination_type": dst}, [(dst, shape)], out_names=["y"])[0]
    z = w.layer("Convert", "opset1", [c], {"destination_type": "f32"}, [("f32", const_shape)], out_names=["w"])[0]
    w.result(y)
    w.result(z)
    return w.save(path)


def runtime_ops(model) -> list[str]:
    """The op types of ``model``'s nodes that run per inference: nodes whose inputs all come from
    initializers (index tables that onnxruntime folds when the session is created) are left out."""
    known = {t.name for t in model.graph.initializer}
    ops = []
    for node in model.graph.node:
        if node.op_type == "Constant" or (node.input and all(i in known for i in node.input if i)):
            known.update(node.output)
        else:
            ops.append(node.op_type)
    return ops


# -- float layers: onnxruntime, the oracle, OpenVINO and a reference agree -------------------
FLOAT_TOLS = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float16: dict(rtol=2e-3, atol=2e-3)}


def close_to_reference(xml, x, dtype, ref, opsets=(17, 18)):
    """onnxruntime at each opset agrees with the oracle, OpenVINO and ``ref`` (input ``x``) within
    :data:`FLOAT_TOLS`; the output has ``x``'s dtype and ``ref``'s shape."""
    want = next(iter(evaluate(ir2onnx.load_ir(xml), {"x": x}).values()))
    ov_out = run_openvino(xml, {"x": x})[0]
    for opset in opsets:
        got = run_onnx(xml, {"x": x}, opset=opset)[0]
        assert got.dtype == dtype and got.shape == ref.shape
        for other in (want, ov_out, ref):
            np.testing.assert_allclose(got, other, **FLOAT_TOLS[dtype])


# -- data movement: onnxruntime, the oracle, OpenVINO and numpy agree bit for bit ------------
def _oracle(xml, feeds):
    return list(evaluate(ir2onnx.load_ir(xml), feeds).values())[0]


def bitexact_everywhere(xml, feeds, expected=None, opset=None, openvino=True):
    """onnxruntime's first output equals, bit for bit, the oracle's, OpenVINO's (unless
    ``openvino=False``) and ``expected`` (when given); returns it."""
    got = run_onnx(xml, feeds, opset=opset)[0]
    assert_bitexact(got, _oracle(xml, feeds), "oracle")
    if openvino:
        assert_bitexact(got, run_openvino(xml, feeds)[0], "openvino")
    if expected is not None:
        assert_bitexact(got, expected, "numpy")
    return got


def all_outputs_bitexact(xml, feeds: dict, openvino: bool = True, names=None) -> list[np.ndarray]:
    """Every output of onnxruntime equals the oracle's and (unless ``openvino=False``) OpenVINO's
    bit for bit; returns them. ``names`` label the outputs in the messages."""
    got = run_onnx(xml, feeds)
    names = names or [f"output {i}" for i in range(len(got))]
    for g, r, name in zip(got, evaluate(ir2onnx.load_ir(xml), feeds).values(), names):
        assert_bitexact(g, r, f"onnxruntime vs oracle, {name}")
    if openvino:
        for g, o, name in zip(got, run_openvino(xml, feeds), names):
            assert_bitexact(g, o, f"onnxruntime vs OpenVINO, {name}")
    return got


def small_ints(rng, shape, dtype, nonzero=False):
    """Integers in [-9, 10) ([0, 10) when unsigned), no zeros when ``nonzero``, as ``dtype``."""
    low = 0 if np.dtype(dtype).kind == "u" else -9
    values = rng.integers(low, 10, size=shape)
    if nonzero:
        values[values == 0] = 3
    return values.astype(dtype)


# -- float layers: onnxruntime, the oracle and OpenVINO agree within tolerance ---------------
def save_one_input(tmp_path, make, dtype=np.float32, shape=(2, 3, 4), extra=()):
    """``make(x, *extra)`` of one input ``x`` (and the parameters ``extra``), saved by OpenVINO as
    ``tmp_path/m.xml`` (uncompressed)."""
    x = ops.parameter(shape, dtype, name="x")
    x.output(0).get_tensor().set_names({"x"})
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.result(make(x, *extra).output(0))], [x, *extra], "m"), str(path),
                  compress_to_fp16=False)
    return path


def close_everywhere(xml, feeds, dtype=np.float32, opsets=(17,), ov_atol=None):
    """onnxruntime at each opset agrees with the oracle and OpenVINO (``ov_atol``: a wider atol
    for OpenVINO) within :data:`FLOAT_TOLS`; returns the oracle's output."""
    want = next(iter(evaluate(ir2onnx.load_ir(xml), feeds).values()))
    ov_out = run_openvino(xml, feeds)[0]
    for opset in opsets:
        got = run_onnx(xml, feeds, opset=opset)[0]
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, **FLOAT_TOLS[dtype])
        np.testing.assert_allclose(got, ov_out, **dict(FLOAT_TOLS[dtype], **({"atol": ov_atol} if ov_atol else {})))
    return want


# -- small models and data ---------------------------------------------------------------------
def save_model(tmp_path, outputs, params, name="m") -> Path:
    """``outputs`` of the OpenVINO ``params``, saved by OpenVINO as ``tmp_path/<name>.xml``."""
    return ov_save(tmp_path / f"{name}.xml", outputs, params)


def const(values, dtype=np.int64):
    """An OpenVINO Constant of ``values``."""
    return ops.constant(np.asarray(values, dtype))


def iota(shape, dtype=np.float32):
    """1, 2, 3 ... in ``shape`` (every element different: a moved element is seen)."""
    return np.asarray(np.arange(int(np.prod(shape))).reshape(shape) + 1).astype(dtype)


def node_types(model) -> list[str]:
    """The op types of an ONNX model's nodes, in order."""
    return [n.op_type for n in model.graph.node]


def random_data(rng, shape, dtype):
    """Normal floats, or integers in [0, 100), as ``dtype``."""
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0, 100, shape).astype(dtype)


def first_outputs(xml, feeds):
    """The first output of onnxruntime, of the oracle and of OpenVINO."""
    got = run_onnx(xml, feeds)
    want = list(evaluate(ir2onnx.load_ir(xml), feeds).values())
    return got[0], want[0], run_openvino(xml, feeds)[0]


def equal_to_the_formula(got: np.ndarray, want: np.ndarray) -> None:
    """An oracle's result against a direct formula in float64: same type and shape; integers
    bit for bit, floats within 1 ulp (the sums are taken in another order, rounded once)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind == "f":
        np.testing.assert_array_max_ulp(got, want, maxulp=1)
    else:
        np.testing.assert_array_equal(got, want)


def optimized_nodes(model, path, accuracy_level: str | None = "0") -> list:
    """The nodes of onnxruntime's optimized graph of ``model`` (default optimizations), written to
    ``path``; MatMulNBits fused at ``accuracy_level`` (None: onnxruntime's default)."""
    import onnx
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.optimized_model_filepath = str(path)
    if accuracy_level is not None:
        opts.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", accuracy_level)
    ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return list(onnx.load(str(path)).graph.node)


def edit_text(path: Path, old: str, new: str, count: int = 1) -> Path:
    """Replace ``old`` (which must be there) by ``new`` in the file, ``count`` times (-1: all)."""
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, count))
    return path


def assert_refused(capsys, tmp_path, xml, pattern: str, *extra: str) -> str:
    """``ir2onnx convert XML -o tmp_path/out.onnx EXTRA...`` exits 2 with one line on stderr that
    matches ``pattern``, no traceback, no output and no temp left; returns the line."""
    out = tmp_path / "out.onnx"
    code = cli_main(["convert", str(xml), "-o", str(out), *extra])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("ir2onnx: error: "), err
    assert "Traceback" not in err
    assert re.search(pattern, err), err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []  # no temp left
    return err


def onnx_node_case(module: str, name: str, folder: Path):
    """The ONNX backend node test ``name`` (defined in ``onnx.backend.test.case.node.<module>``)
    as an IR that OpenVINO reads and saves (``read_model`` -> ``save_model``, weights as they
    are): ``(xml, {input name: array}, [expected outputs], (rtol, atol))``."""
    import importlib

    import onnx.backend.test.case.node as cases
    from onnx import numpy_helper

    importlib.import_module(f"onnx.backend.test.case.node.{module}")  # its cases are made on import
    case = next(c for c in cases._NodeTestCases if c.name == name)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").write_bytes(case.model.SerializeToString())
    xml = folder / "model.xml"
    ov.save_model(ov.Core().read_model(str(folder / "model.onnx")), str(xml), compress_to_fp16=False)
    inits = {t.name for t in case.model.graph.initializer}
    names = [i.name for i in case.model.graph.input if i.name not in inits]
    feeds, expected = case.data_sets[0]
    arrays = [np.asarray(a) if isinstance(a, (np.ndarray, np.generic)) else numpy_helper.to_array(a) for a in feeds]
    return xml, dict(zip(names, arrays)), list(expected), (case.rtol, case.atol)
