"""OpenVINO reads the converted file back (``check --round-trip``): its ONNX frontend loads the
ONNX that ir2onnx wrote, and its CPU plugin runs it at the check's exact settings on the same
inputs as every other backend (``openvino:onnx``), so that the check compares OpenVINO on the
ONNX file with OpenVINO on the IR (and with onnxruntime and the oracles).

A file OpenVINO's ONNX frontend cannot read or compile is reported as ``refused`` (a limit of
that frontend, with its message), not as a failure of the conversion; outputs that differ are
failures like any other pair's. The CLI runs it in a child process
(:mod:`ir2onnx.harness.openvino_child`): a crash of OpenVINO ends only the child.
"""
from __future__ import annotations

import numpy as np
import onnx

from ..runtime.stateful import NEW, at_step, step_name
from .backends import OPENVINO_EXACT, Refused, _as_float, _ov_tensor, run_in_child

NAME = "openvino:onnx"


def run_openvino_onnx(model_path, feeds: dict | list, state: dict | None = None,
                      steps: int = 0) -> dict[str, np.ndarray]:
    """OpenVINO (CPU, f32, no dynamic quantization, f32 KV cache) on the ONNX file at
    ``model_path``; outputs by the file's output names. ``steps`` > 0: a stateful model's steps,
    each step's ``<variable>.new`` fed back as the variable's input (``state``: the first step's),
    outputs named ``<output>@k`` as :func:`ir2onnx.runtime.stateful.ort_steps` names them."""
    import openvino as ov

    graph_outputs = [o.name for o in onnx.load(str(model_path), load_external_data=False).graph.output]
    core = ov.Core()
    try:
        compiled = core.compile_model(core.read_model(str(model_path)), "CPU", OPENVINO_EXACT)
    except Exception as e:  # the ONNX frontend's own limits
        raise Refused(f"OpenVINO cannot read or compile the ONNX file: {' '.join(str(e).split())[-400:]}") from None
    request = compiled.create_infer_request()
    out_names = [next((n for n in graph_outputs if n in port.get_names()), port.get_any_name())
                 for port in compiled.outputs]

    def once(feed: dict) -> dict[str, np.ndarray]:
        for i, port in enumerate(compiled.inputs):
            name = next((n for n in port.get_names() if n in feed), None)
            if name is None:
                raise RuntimeError(f"OpenVINO's input {port.get_any_name()} has no feed")
            request.set_input_tensor(i, _ov_tensor(ov, _as_float(feed[name], port.get_element_type())))
        request.infer()
        return {n: np.array(request.get_output_tensor(i).data) for i, n in enumerate(out_names)}

    if not steps:
        return once(at_step(feeds, 1) if isinstance(feeds, list) else feeds)
    carried, out = dict(state or {}), {}
    for k in range(1, steps + 1):
        for name, value in once({**at_step(feeds, k), **carried}).items():
            if name.endswith(NEW) and name[: -len(NEW)] in carried:
                carried[name[: -len(NEW)]] = value
            out[step_name(name, k)] = value
    return out


def run_isolated(model_path, feeds: dict | list, state: dict | None = None, steps: int = 0) -> dict:
    """:func:`run_openvino_onnx` in a child process (OpenVINO's crashes end only the child)."""
    return run_in_child(["onnx", str(model_path), str(steps)],
                        {"feeds": feeds if isinstance(feeds, list) else dict(feeds), "state": dict(state or {})})
