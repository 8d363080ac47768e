"""Timing shared by the benchmarks: rounds of blocks, ratios against OpenVINO in the same run."""
from __future__ import annotations

import time

import numpy as np


def measure(runners: dict, rounds: int, budget_s: float, block: int = 20, settle: int = 10,
            baseline: str = "openvino") -> tuple[dict[str, tuple[float, float, float]], int]:
    """{name: (median seconds, median of per-round ratios to ``baseline`` (default 'openvino'),
    ratio of the fastest runs)} from rounds of blocks, and the number of rounds run. In a round each runner runs
    ``settle`` untimed and then ``block`` timed runs back to back: onnxruntime's and OpenVINO's
    worker threads keep spinning for a while after a run, and on a 2-core machine a runtime timed
    right after the other one was measured up to 2x slower than on its own (both ways); with
    blocks of 8 after 3 settling runs the medians were still 15-30% above those of a runtime
    timed alone, with 20 after 10 they match. The per-round ratio of block medians still cancels
    most of the drift of a shared machine."""
    for fn in runners.values():
        for _ in range(3):
            fn()
    times = {k: [] for k in runners}
    start = time.perf_counter()
    for _ in range(rounds):
        for k, fn in runners.items():
            for _ in range(settle):
                fn()
            ts = []
            for _ in range(block):
                t = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t)
            times[k].append((float(np.median(ts)), min(ts)))
        if time.perf_counter() - start > budget_s:
            break
    ov = np.array(times[baseline])
    out = {}
    for k, v in times.items():
        v = np.array(v)
        out[k] = (float(np.median(v[:, 0])), float(np.median(v[:, 0] / ov[:, 0])), float(v[:, 1].min() / ov[:, 1].min()))
    return out, len(ov)
