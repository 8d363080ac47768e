"""Selftest cases of ReadValue-3/-6 and Assign-3/-6: stateful models run 4 steps on every backend
(outputs compared as ``<name>@<step>``, variables as ``<variable_id>.new@<step>``)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .cases import Case, const, param


def stateful_build(make, compress: bool = False, name: str = "case"):
    """A ``build`` for ``make(ops) -> (outputs, sinks, parameters)`` (sinks: the Assign nodes)."""
    def build(folder: Path) -> Path:
        import openvino as ov
        import openvino.opset15 as ops

        outputs, sinks, params = make(ops)
        results = []
        for node, tensor_name in outputs:
            out = node.output(0) if hasattr(node, "output") else node
            out.get_tensor().set_names({tensor_name})
            results.append(ops.result(out))
        path = Path(folder) / f"{name}.xml"
        ov.save_model(ov.Model(results, sinks, params, name), str(path), compress_to_fp16=compress)
        return path
    return build


def _variable(var_id, shape, dtype=np.float32):
    import openvino as ov
    from openvino.op.util import Variable, VariableInfo

    info = VariableInfo()
    info.data_shape, info.data_type, info.variable_id = ov.PartialShape(shape), ov.Type(dtype), var_id
    return Variable(info)


def kv_decoder(layers: int = 2, d: int = 4, seed: int = 0):
    """A two-layer single-head decoder over one token x[?, 1, d] per step. Each layer keeps a
    KV-cache k_cache_<l>, v_cache_<l> of shape [?, steps so far, d] (init: zeros with a
    0-length sequence axis, made from x's batch by Broadcast) that grows by one token a step:
    K = concat(cache, x Wk); attention softmax(q K^T / sqrt(d)) V; x += attention Wo."""
    def make(ops):
        rng = np.random.default_rng(seed)
        x = param(ops, [None, 1, d])
        batch = ops.gather(ops.shape_of(x), const(ops, [0]), const(ops, 0))
        empty = ops.broadcast(const(ops, 0.0, np.float32), ops.concat([batch, const(ops, [0, d])], 0))
        h, sinks = x, []
        for layer in range(layers):
            w = {k: ops.constant((rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32))
                 for k in ("q", "k", "v", "o")}
            q, k, v = (ops.matmul(h, w[n], False, False) for n in ("q", "k", "v"))
            caches = []
            for name, new in (("k", k), ("v", v)):
                var = _variable(f"{name}_cache_{layer}", [-1, -1, d])
                full = ops.concat([ops.read_value(empty, var), new], 1)
                sinks.append(ops.assign(full, var))
                caches.append(full)
            scores = ops.divide(ops.matmul(q, caches[0], False, True), const(ops, np.sqrt(d), np.float32))
            attn = ops.matmul(ops.softmax(scores, -1), caches[1], False, False)
            h = ops.add(h, ops.matmul(attn, w["o"], False, False))
        return [(h, "y")], sinks, [x]
    return make


def counter3():
    """ReadValue-3 / Assign-3: total <- total + x, from a constant init of ones."""
    def make(ops):
        import openvino.opset3 as o3

        x = param(ops, [2, 3])
        total = o3.read_value(ops.constant(np.ones((2, 3), np.float32)), "total")
        new = ops.add(total, x)
        return [(new, "y")], [o3.assign(new, "total")], [x]
    return make


def no_init6():
    """ReadValue-6 without an init input (zeros of variable_shape): s <- s * 0.5 + x."""
    def make(ops):
        import openvino.opset6 as o6

        x = param(ops, [2, 3])
        var = _variable("s", [2, 3])
        s = o6.read_value(var)
        new = ops.add(ops.multiply(s, const(ops, 0.5, np.float32)), x)
        return [(new, "y")], [o6.assign(new, var)], [x]
    return make


def _counter_expect(step, start=1.0):
    return lambda f: start + step * f["x"]


RV3, RV6 = ("ReadValue", "opset3"), ("ReadValue", "opset6")
AS3, AS6 = ("Assign", "opset3"), ("Assign", "opset6")
CASES = [
    Case("state/kv-decoder", RV6, stateful_build(kv_decoder(), compress=True), exact=False,
         shapes={"x": (2, 1, 4)}, expect={f"k_cache_1.new@{k}": (2, k, 4) for k in range(1, 5)}),
    Case("state/assign6-kv-decoder", AS6, stateful_build(kv_decoder(layers=1)), exact=False,
         shapes={"x": (1, 1, 4)}, expect={f"v_cache_0.new@{k}": (1, k, 4) for k in range(1, 5)}),
    Case("state/read-value3-counter", RV3, stateful_build(counter3()), exact=False,
         expect={f"y@{k}": _counter_expect(k) for k in range(1, 5)}),
    Case("state/assign3-counter", AS3, stateful_build(counter3()), exact=False,
         expect={"total.new@4": _counter_expect(4)}),
    Case("state/read-value6-no-init", RV6, stateful_build(no_init6()), exact=False,
         expect={"y@1": lambda f: f["x"], "y@2": lambda f: f["x"] * 1.5}),
]
