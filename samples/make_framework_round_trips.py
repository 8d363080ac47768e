"""Regenerate samples/framework/: tiny PyTorch models that reach a layer where OpenVINO's runtime
and the spec text differ, converted by OpenVINO's PyTorch frontend and saved as IR.

For each model NAME and input set S: ``NAME/S.xml`` + ``.bin`` (``openvino.convert_model`` of the
``torch.nn.Module``, saved by ``openvino.save_model`` with its defaults: f16-compressed weights,
the dims left dynamic; inputs named ``in0, in1, ...``, outputs ``out0, out1, ...``),
``NAME/S_inK.npy`` (the K-th input) and ``NAME/S_outK.npy`` (torch eager's K-th output on them:
the truth that tests/test_framework_round_trips.py compares ir2onnx with; ``ir2onnx check`` in
tests/test_harness.py reads the same files). torch is not a test dependency; run

    python samples/make_framework_round_trips.py
"""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "framework"


def models():
    import torch

    class FloorDivide(torch.nn.Module):  # a // b on integers: Floor(Divide(m_pythondiv=true))
        def forward(self, a, b):
            return a // b

    class TruncDivide(torch.nn.Module):  # rounding_mode="trunc" on i32: Divide(m_pythondiv=true)
        def forward(self, a, b):
            return torch.div(a, b, rounding_mode="trunc")

    class ScatterMean(torch.nn.Module):  # ScatterElementsUpdate-12 reduction="mean", integers
        def forward(self, x, i, u):
            return (x.scatter_reduce(0, i, u, reduce="mean", include_self=False),
                    x.scatter_reduce(0, i, u, reduce="mean", include_self=True))

    class FakeQuantize(torch.nn.Module):  # FakeQuantize-1 with run-time ranges, scale > 0, < 0, 0
        def forward(self, x, scale):
            return torch.fake_quantize_per_tensor_affine(x, scale, torch.tensor(0, dtype=torch.int32), 0, 255)

    class Flatten(torch.nn.Module):  # Reshape-1 beside a zero-sized dim
        def forward(self, x):
            return x.flatten(1)

    class RoundSign(torch.nn.Module):  # Round-5 half_to_even on f32 and i32, Sign on i64
        def forward(self, x, n, k):
            return torch.round(x), torch.sign(n), torch.round(k)

    class IntegerPower(torch.nn.Module):  # Power-1 on integers: wraps; negative exponents truncate
        def forward(self, a, b):
            return a ** b

    class IntegerSum(torch.nn.Module):  # ReduceSum-1 on integers: exact, wrapping (i64), torch promotes i32
        def forward(self, a, b):
            return a.sum(1), b.sum(0, keepdim=True)

    class HalfRoundTrip(torch.nn.Module):  # Convert f32 -> f16 -> f32
        def forward(self, x):
            return x.half().float()

    i32 = np.int32
    num = np.array([4, -4, 7, -7, 5, -9, 0, 9], i32)
    den = np.array([-6, 6, 2, 2, -3, -3, -5, 4], i32)
    yield "divide_floor", FloorDivide(), {"signs": [num, den]}
    yield "divide_trunc", TruncDivide(), {"signs": [num, den]}
    yield "scatter_mean", ScatterMean(), {"floor": [np.array([0, 5, -7, 1, 8], i32), np.array([0, 0, 0, 1, 2, 2, 4], np.int64),
                                                   np.array([-7, 0, 0, 4, 2, 3, -1], i32)]}
    x = np.linspace(-2, 2, 17).astype(np.float32) + np.float32(0.003)  # off the level ties
    yield "fake_quantize", FakeQuantize(), {"positive": [x, np.float32(0.01)], "negative": [x, np.float32(-0.01)],
                                            "zero": [x, np.float32(0.0)]}
    yield "flatten", Flatten(), {"empty": [np.zeros((0, 3, 4, 4), np.float32)], "two": [np.arange(96, dtype=np.float32).reshape(2, 3, 4, 4)]}
    edges = np.array([0.49999997, 0.5, 1.5, 2.5, -2.5, -0.0, -0.4, 8388609.0, -8388609.0, 16777215.0], np.float32)
    yield "round_sign", RoundSign(), {"edges": [edges, np.array([2**63 - 1, -2**63, 5, 0, -3], np.int64),
                                                np.array([2**31 - 1, -2**31, 5, -3], i32)]}
    base, power = [3, 2, 0, -1, -1, 2, 5, -3, 7, 1], [21, 7, -1, -1, -2, -3, 3, 5, 40, -4]
    yield "integer_power", IntegerPower(), {
        **{t: [np.array(base, t), np.array(power, t)] for t in ("int8", "int16", "int32", "int64")},
        "uint8": [np.array([3, 2, 0, 1, 255, 2, 5, 7, 1, 16], np.uint8), np.array([21, 8, 0, 200, 2, 7, 3, 255, 9, 2], np.uint8)]}
    big = np.array([[2**53 + 1, 2, 0], [2**62, 2**62, 2**62], [2**33 + 1, 2, -5]], np.int64)
    yield "integer_sum", IntegerSum(), {"big": [big, np.array([[2**24 + 1, 2], [2, 2**31 - 1]], i32)]}
    yield "half_round_trip", HalfRoundTrip(), {"edges": [np.array([1.0001, 3.14159265, 1e-8, 70000.0, -0.0], np.float32)]}


def main() -> None:
    import openvino as ov
    import torch

    shutil.rmtree(HERE, ignore_errors=True)
    for name, module, sets in models():
        folder = HERE / name
        folder.mkdir(parents=True)
        for set_name, inputs in sets.items():
            tensors = tuple(torch.from_numpy(np.asarray(a)) for a in inputs)
            model = ov.convert_model(module, example_input=tensors)
            for k, port in enumerate(model.inputs):
                port.get_tensor().set_names({f"in{k}"})
            for k, port in enumerate(model.outputs):
                port.get_tensor().set_names({f"out{k}"})
            ov.save_model(model, str(folder / f"{set_name}.xml"))
            outs = module(*tensors)
            outs = outs if isinstance(outs, tuple) else (outs,)
            for k, a in enumerate(inputs):
                np.save(folder / f"{set_name}_in{k}.npy", np.asarray(a))
            for k, o in enumerate(outs):
                np.save(folder / f"{set_name}_out{k}.npy", o.numpy())
    print(f"wrote {HERE}")


if __name__ == "__main__":
    main()
