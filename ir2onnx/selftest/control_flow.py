"""Selftest cases of If-8, Loop-5 and TensorIterator-1 (bodies built with openvino.opset15).

The TensorIterator bodies are an RNN cell made of MatMul, Add and Tanh (LSTMCell is another
family's). OpenVINO's CPU plugin mis-runs a TensorIterator whose body adds the sliced input
straight to the carried value (measured: the carried value is replaced by the slice; the
running-sum case records it), so the other bodies go through a MatMul first.
"""
from __future__ import annotations

import numpy as np

from .cases import Case, const, ov_build, param


def if_model(const_cond=None):
    """y = x * 2 if c else -x (``c`` a boolean input, or a constant when ``const_cond`` is set)."""
    def make(ops):
        import openvino as ov

        x = param(ops, [None, 3])
        c = ops.constant(np.bool_(const_cond)) if const_cond is not None else param(ops, [], np.bool_, "c")
        node = ops.if_op(c)
        tx, ex = ops.parameter([-1, 3], np.float32), ops.parameter([-1, 3], np.float32)
        tr = ops.result(ops.multiply(tx, const(ops, 2.0, np.float32)))
        er = ops.result(ops.negative(ex))
        node.set_then_body(ov.Model([tr], [tx]))
        node.set_else_body(ov.Model([er], [ex]))
        node.set_input(x.output(0), tx, ex)
        return [(node.set_output(tr, er), "y")], [x] + ([] if const_cond is not None else [c])
    return make


def loop_model(trip=4, stop_at=None, runtime_trip=False):
    """acc += x * i for i < trip (or until i == stop_at); outputs the last acc and every acc
    concatenated along axis 0."""
    def make(ops):
        import openvino as ov

        x = param(ops, [1, 3])
        t = param(ops, [], np.int64, "trip") if runtime_trip else const(ops, trip)
        node = ops.loop(t, ops.constant(True))
        bi = ops.parameter([], np.int64)
        bacc, bx = ops.parameter([1, 3], np.float32), ops.parameter([1, 3], np.float32)
        acc = ops.add(bacc, ops.multiply(bx, ops.convert(bi, np.float32)))
        if stop_at is None:
            cond = ops.constant(True)
        else:
            cond = ops.less(ops.add(bi, const(ops, 1)), const(ops, stop_at))
        racc, rcond = ops.result(acc), ops.result(cond)
        node.set_function(ov.Model([rcond, racc], [bx, bi, bacc]))
        node.set_special_body_ports([1, 0])
        node.set_invariant_input(bx, x.output(0))
        node.set_merged_input(bacc, ops.constant(np.zeros((1, 3), np.float32)).output(0), racc.output(0))
        last = node.get_iter_value(racc.output(0), -1)
        every = node.get_concatenated_slices(racc.output(0), 0, 1, 1, -1, 0)
        return [(last, "last"), (every, "every")], [x] + ([t] if runtime_trip else [])
    return make


def rnn_model(reverse=False, steps=5, seed=1, part=1):
    """h = tanh(x_t W + h R) over axis 1 of x (backwards when ``reverse``; ``part`` steps of x at
    a time, flattened); outputs the last h and every h concatenated along axis 1."""
    def make(ops):
        import openvino as ov

        rng = np.random.default_rng(seed)
        w = rng.standard_normal((3 * part, 4)).astype(np.float32)
        r = rng.standard_normal((4, 4)).astype(np.float32) * 0.5
        x, h = param(ops, [None, steps, 3]), param(ops, [None, 4], name="h")
        node = ops.tensor_iterator()
        bx, bh = ops.parameter([-1, part, 3], np.float32), ops.parameter([-1, 4], np.float32)
        xt = ops.reshape(bx, const(ops, [0, 3 * part]), True)
        nh = ops.tanh(ops.add(ops.matmul(xt, ops.constant(w), False, False),
                              ops.matmul(bh, ops.constant(r), False, False)))
        r0, r1 = ops.result(nh), ops.result(ops.unsqueeze(nh, const(ops, [1])))
        node.set_body(ov.Model([r0, r1], [bx, bh]))
        if reverse:
            node.set_sliced_input(bx, x.output(0), -1, -1, 1, 0, 1)
        else:
            node.set_sliced_input(bx, x.output(0), 0, part, part, -1, 1)
        node.set_merged_input(bh, h.output(0), r0.output(0))
        last = node.get_iter_value(r0.output(0), -1)
        every = node.get_concatenated_slices(r1.output(0), 0, 1, 1, -1, 1)
        return [(last, "h_last"), (every, "h_all")], [x, h]
    return make


def running_sum_model(steps=3):
    """h = x_t + h over axis 1 (the body adds the slice straight to the carried value): OpenVINO's
    CPU plugin replaces the carried value by the slice (2 * x_last), the spec sums."""
    def make(ops):
        import openvino as ov

        x, h = param(ops, [1, steps, 3]), param(ops, [1, 3], name="h")
        node = ops.tensor_iterator()
        bx, bh = ops.parameter([1, 1, 3], np.float32), ops.parameter([1, 3], np.float32)
        r0 = ops.result(ops.add(ops.reshape(bx, const(ops, [1, 3]), False), bh))
        node.set_body(ov.Model([r0], [bx, bh]))
        node.set_sliced_input(bx, x.output(0), 0, 1, 1, -1, 1)
        node.set_merged_input(bh, h.output(0), r0.output(0))
        return [(node.get_iter_value(r0.output(0), -1), "total")], [x, h]
    return make


def sliced_loop_model():
    """A Loop over slices of x[?, 4, 3] along axis 1 (acc <- 2 acc + x_t) for a run-time trip
    count; outputs the last acc, every acc along axis 1 and the last iteration number (a
    last-iteration output that is not a back edge)."""
    def make(ops):
        import openvino as ov

        x, t = param(ops, [None, 4, 3]), param(ops, [], np.int64, "trip")
        node = ops.loop(t, ops.constant(True))
        bx, bacc = ops.parameter([-1, 1, 3], np.float32), ops.parameter([-1, 1, 3], np.float32)
        bi = ops.parameter([], np.int64)
        racc = ops.result(ops.add(ops.multiply(bacc, const(ops, 2.0, np.float32)), bx))
        rc, ri = ops.result(ops.constant(True)), ops.result(ops.convert(bi, np.float32))
        node.set_function(ov.Model([rc, racc, ri], [bx, bacc, bi]))
        node.set_special_body_ports([2, 0])
        node.set_sliced_input(bx, x.output(0), 0, 1, 1, -1, 1)
        node.set_merged_input(bacc, ops.constant(np.zeros((1, 1, 3), np.float32)).output(0), racc.output(0))
        return [(node.get_iter_value(racc.output(0), -1), "last"),
                (node.get_concatenated_slices(racc.output(0), 0, 1, 1, -1, 1), "every"),
                (node.get_iter_value(ri.output(0), -1), "last_i")], [x, t]
    return make


def _loop_expected(trip):
    def every(f):
        acc, out = np.zeros((1, 3), np.float32), []
        for i in range(trip):
            acc = acc + f["x"] * np.float32(i)
            out.append(acc)
        return np.concatenate(out, 0)
    return every


IF, LOOP, TI = ("If", "opset8"), ("Loop", "opset5"), ("TensorIterator", "opset1")
CASES = [
    Case("if/true", IF, ov_build(if_model()), inputs=lambda rng: {"c": np.array(True)},
         shapes={"x": (2, 3)}, expect={"y": lambda f: f["x"] * 2}),
    Case("if/false", IF, ov_build(if_model()), inputs=lambda rng: {"c": np.array(False)},
         shapes={"x": (2, 3)}, expect={"y": lambda f: -f["x"]}),
    Case("if/constant-condition", IF, ov_build(if_model(const_cond=False)), shapes={"x": (2, 3)},
         expect={"y": lambda f: -f["x"]}),
    Case("loop/trip-count", LOOP, ov_build(loop_model(4)), exact=False,
         expect={"every": _loop_expected(4), "last": lambda f: _loop_expected(4)(f)[-1:]}),
    Case("loop/execution-condition", LOOP, ov_build(loop_model(10, stop_at=3)), exact=False,
         expect={"every": _loop_expected(3)}),
    Case("loop/runtime-trip-count", LOOP, ov_build(loop_model(runtime_trip=True)), exact=False,
         inputs=lambda rng: {"trip": np.array(2, np.int64)}, expect={"every": _loop_expected(2)}),
    Case("loop/sliced-input", LOOP, ov_build(sliced_loop_model()), exact=False,
         inputs=lambda rng: {"trip": np.array(3, np.int64)}, shapes={"x": (1, 4, 3)},
         expect={"last_i": np.float32(2), "every": (1, 3, 3),
                 "last": lambda f: (4 * f["x"][:, :1] + 2 * f["x"][:, 1:2] + f["x"][:, 2:3])}),
    Case("tensor_iterator/forward", TI, ov_build(rnn_model()), exact=False, shapes={"x": (2, 5, 3), "h": (2, 4)},
         expect={"h_all": (2, 5, 4), "h_last": (2, 4)}),
    Case("tensor_iterator/reverse", TI, ov_build(rnn_model(reverse=True)), exact=False,
         shapes={"x": (2, 5, 3), "h": (2, 4)}, expect={"h_all": (2, 5, 4)}),
    Case("tensor_iterator/part-size-2", TI, ov_build(rnn_model(steps=6, part=2)), exact=False,
         shapes={"x": (2, 6, 3), "h": (2, 4)}, expect={"h_all": (2, 3, 4)}),
    Case("tensor_iterator/running-sum", TI, ov_build(running_sum_model()), exact=False,
         expect={"total": lambda f: f["h"] + f["x"].sum(1)},
         openvino_deviates="a body adding the slice straight to the carried value: OpenVINO's CPU "
                           "plugin gives 2 * the last slice instead of the running sum"),
]
