"""Stateful models (ReadValue/Assign) driven step by step on every backend.

The converted model takes each variable as an input named by its ``variable_id`` and returns
``<variable_id>.new``; a step feeds the previous step's ``.new`` back (the first step: the
variables' init values, :func:`ir2onnx.oracles.state.initial_state`). The feeds are the same on
every step, or one dict per step (an LLM's decode steps, :func:`ir2onnx.llm.interface.step_feeds`). OpenVINO keeps the state
itself (``reset_state``, then repeated ``infer``), the oracle interpreter in a dict. Outputs of
step ``k`` (from 1) are named ``<output>@k``, the variables after it ``<variable_id>.new@k``.
"""
from __future__ import annotations

import numpy as np

from ..ir.graph import Graph
from ..ir.names import output_names, variables  # noqa: F401  variables: the state's names, read here by every backend
from ..oracles import evaluate
from ..oracles.state import initial_state as _initial
from . import sessions as runtime

STEPS = 4
NEW = ".new"


def step_name(name: str, k: int) -> str:
    return f"{name}@{k}"


def step_output_names(graph: Graph, steps: int) -> list[str]:
    """Every compared name of a ``steps``-step run: outputs, then variables, step by step."""
    names = list(output_names(graph).values()) + [v + NEW for v in variables(graph)]
    return [step_name(n, k) for k in range(1, steps + 1) for n in names]


def at_step(feeds: dict | list, k: int) -> dict:
    """The feeds of step ``k`` (from 1): the same dict every step, or the k-th of a list."""
    return feeds[k - 1] if isinstance(feeds, (list, tuple)) else feeds


def initial_state(graph: Graph, feeds: dict | list) -> dict[str, np.ndarray]:
    """The state the converted model is fed on its first step (the variables' init values)."""
    return _initial(graph, at_step(feeds, 1))


def ort_steps(sess, feeds: dict | list, state: dict, steps: int) -> dict[str, np.ndarray]:
    """Run an onnxruntime session ``steps`` times, feeding each step's ``.new`` back."""
    state, out = dict(state), {}
    for k in range(1, steps + 1):
        got = runtime.run(sess, {**at_step(feeds, k), **state})
        for name, value in got.items():
            if name.endswith(NEW) and name[: -len(NEW)] in state:
                state[name[: -len(NEW)]] = value
            out[step_name(name, k)] = value
    return out


def oracle_steps(graph: Graph, feeds: dict | list, steps: int) -> dict[str, np.ndarray]:
    """The oracle interpreter for ``steps`` steps, its state carried in a dict."""
    state: dict = {}
    out = {}
    for k in range(1, steps + 1):
        for name, value in evaluate(graph, at_step(feeds, k), state).items():
            out[step_name(name, k)] = value
        for var in variables(graph):
            out[step_name(var + NEW, k)] = state[var]
    return out


def openvino_steps(request, collect, steps: int, set_inputs=None) -> dict[str, np.ndarray]:
    """OpenVINO's stateful inference: reset_state, then ``steps`` infers; ``collect()`` reads the
    outputs of one infer by name; ``set_inputs(k)``, when given, sets step k's inputs."""
    request.reset_state()
    out = {}
    for k in range(1, steps + 1):
        if set_inputs is not None:
            set_inputs(k)
        request.infer()
        for name, value in collect().items():
            out[step_name(name, k)] = value
        for s in request.query_state():
            out[step_name(s.name + NEW, k)] = np.array(s.state.data)
    return out
