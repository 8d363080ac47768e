"""Decoding an LLM step by step: the feeds ``ir2onnx check`` compares on every step, and the
greedy loop of ``ir2onnx run --steps`` (interfaces: :mod:`ir2onnx.llm.interface`).

The check feeds every backend the same tokens (teacher forcing, so a near-tie in one backend's
argmax cannot make the backends' inputs diverge): step 1 the prompt ``[batch, n]``, each next
step one random token per row; the mask is ones over every token so far, the positions
count on, ``beam_idx`` is ``arange(batch)``. The run's greedy loop feeds back each step's argmax.
"""
from __future__ import annotations

import sys

import numpy as np

from ..errors import Ir2OnnxError
from ..ir.graph import Graph
from ..ir.names import input_name, output_names, parameters, results
from ..runtime import sessions as runtime
from ..runtime.sessions import input_dtype
from ..runtime.stateful import step_name
from .interface import empty_cache, Interface, prompt, token_feeds, TOKEN_INPUTS

PROMPT = (1, 8)  # batch, tokens of a generated prompt
EXPLICIT_PAST = 3  # cached tokens fed to an IR with an explicit cache (--disable-stateful)


def _vocab(graph: Graph) -> int:
    names = output_names(graph)
    for r in results(graph):
        src, index = graph.producer(r, 0)
        shape = src.outputs[index].shape
        if names[r.id] == "logits" and shape and isinstance(shape[-1], int):
            return shape[-1]
    raise Ir2OnnxError("the LLM IR has no 'logits' output with a static vocabulary dim")


def _graph_interface(graph: Graph) -> tuple[Interface, dict]:
    params = {input_name(p): p for p in parameters(graph)}
    dtypes = {n: np.dtype(p.attrs["element_type"].numpy) for n, p in params.items()}
    return Interface({n: dtypes[n] for n in TOKEN_INPUTS if n in dtypes}, "logits"), params


def step_feeds(graph: Graph, feeds: dict, given: dict, shapes: dict, seed: int,
               steps: int) -> list[dict]:
    """One feed dict per step for an LLM IR (see the module docstring); ``feeds`` are the
    generic first-step feeds, kept for any other input; ``given`` arrays win on every step."""
    iface, params = _graph_interface(graph)
    vocab = _vocab(graph)
    shapes = dict(shapes)
    shapes.setdefault("input_ids", PROMPT)
    ids = prompt(iface, given, shapes, vocab, seed)
    rng = np.random.default_rng(seed + 1)
    batch, out, past = ids.shape[0], [], 0
    explicit = {n: p for n, p in params.items() if n.startswith("past_key_values.")}
    for name, p in explicit.items():
        shape = [batch, *p.attrs["shape"][1:]]
        shape[2] = EXPLICIT_PAST
        if any(d is None for d in shape):
            raise Ir2OnnxError(f"input '{name}' has dims ir2onnx cannot choose: give it with --input")
        feeds = {**feeds, name: given.get(name, rng.standard_normal(shape).astype(p.attrs["element_type"].numpy))}
        past = EXPLICIT_PAST
    for _ in range(max(steps, 1)):
        step = {**feeds, **token_feeds(iface, ids, past, given if not out else None)}
        out.append(step)
        past += ids.shape[1]
        ids = rng.integers(0, vocab, size=(batch, 1))
    return out


def greedy(sess, iface: Interface, ids: np.ndarray, steps: int, extra: dict | None = None):
    """Greedy decoding on an onnxruntime session: ``steps`` steps from the prompt ``ids``, each
    step's argmax fed back with the cache. Returns (tokens [batch, steps], outputs of every step
    named ``<output>@k``)."""
    types = {i.name: runtime.input_dtype(i.type) for i in sess.get_inputs()}
    cache = empty_cache(iface, ids.shape[0], types)
    outputs = {c.output: c.input for c in iface.caches}
    tokens, out, past = [], {}, 0
    for k in range(1, steps + 1):
        got = runtime.run(sess, {**(extra or {}), **token_feeds(iface, ids, past), **cache})
        for name, value in got.items():
            out[step_name(name, k)] = value
            if name in outputs:
                cache[outputs[name]] = value
        logits = got[iface.logits]
        if logits.ndim != 3:
            raise Ir2OnnxError(f"output '{iface.logits}' has shape {list(logits.shape)}, not "
                               f"[batch, tokens, vocab]")
        past += ids.shape[1]
        ids = np.argmax(logits[:, -1], axis=-1)[:, None]
        tokens.append(ids[:, 0])
    return np.stack(tokens, axis=1), out


def run_llm(sess, iface: Interface, given: dict, shapes: dict, args) -> int:
    """``ir2onnx run`` on an LLM: greedy decoding of ``args.steps`` tokens, printed per batch row;
    ``--save`` keeps every step's outputs (``<output>@k``) and the tokens."""
    if args.steps < 1:
        raise Ir2OnnxError(f"--steps must be at least 1, got {args.steps}")
    info = {i.name: i for i in sess.get_inputs()}
    vocab = next((o.shape[-1] for o in sess.get_outputs() if o.name == iface.logits
                  and isinstance(o.shape[-1], int)), None)
    if vocab is None and "input_ids" not in given:
        raise Ir2OnnxError(f"output '{iface.logits}' has no static vocabulary dim: give the "
                           f"prompt with --input input_ids=FILE.npy")
    extra = {n: v for n, v in given.items() if n != "input_ids"}
    for name in extra:
        if name not in info:
            raise Ir2OnnxError(f"the model has no input '{name}' (inputs: {', '.join(info)})")
    ids = prompt(iface, given, {"input_ids": PROMPT, **shapes}, vocab or 1, args.seed)
    ids = ids.astype(input_dtype(info["input_ids"].type))
    tokens, outputs = greedy(sess, iface, ids, args.steps, extra)
    for row in range(ids.shape[0]):
        print(f"prompt[{row}]: {' '.join(map(str, ids[row]))}")
        print(f"tokens[{row}]: {' '.join(map(str, tokens[row]))}")
    if args.save:
        np.savez(args.save, tokens=tokens, prompt=ids, **outputs)
        print(f"saved the tokens and {len(outputs)} output(s) to {args.save}", file=sys.stderr)
    return 0
