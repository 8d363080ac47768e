"""Write samples/lrn_cnn/: an AlexNet-style CNN with nn.LocalResponseNorm, as OpenVINO writes it
(run by hand; needs torch and openvino).

    python samples/make_lrn_cnn.py

The torch module (Conv2d -> ReLU -> LocalResponseNorm(5) (torch's defaults: alpha 1e-4, beta 0.75,
k 1) -> MaxPool2d -> Conv2d -> ReLU -> LocalResponseNorm(3, k=2)) is saved two ways, each with
``openvino.save_model``'s defaults (f16-compressed weights) and a dynamic batch dim:

* ``pytorch``: ``openvino.convert_model(module)``. OpenVINO's PyTorch frontend sees torch's own
  decomposition of local_response_norm (Pad, AvgPool, Multiply, Power, Divide), no LRN layer;
* ``onnx``: the same layers and weights as an ONNX graph written with onnx.helper (Conv, Relu,
  LRN, MaxPool, ...; torch's own ONNX exporter decomposes LocalResponseNorm too) read by
  ``openvino.Core().read_model``: the IR has two LRN-1 layers (axes [1]), as the AlexNet- and
  GoogLeNet-era ONNX/Caffe/TensorFlow models give.

Each folder holds model.xml, model.bin, input.npy and expected.npy (torch's output, float32, with
the f32 weights: the IR's f16 weights round them, so compare within 1e-3 relative).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import torch
from torch import nn

ROOT = Path(__file__).resolve().parent / "lrn_cnn"


class LrnCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.lrn1 = nn.LocalResponseNorm(5)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 6, 3)
        self.lrn2 = nn.LocalResponseNorm(3, k=2.0)

    def forward(self, x):
        x = self.pool(self.lrn1(torch.relu(self.conv1(x))))
        return self.lrn2(torch.relu(self.conv2(x)))


def onnx_graph(model: LrnCNN):
    """The module's layers as ONNX nodes, with its weights."""
    from onnx import TensorProto, helper, numpy_helper

    w = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    inits = [numpy_helper.from_array(v, k) for k, v in w.items()]
    nodes = [
        helper.make_node("Conv", ["x", "conv1.weight", "conv1.bias"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("LRN", ["r1"], ["l1"], size=5, alpha=1e-4, beta=0.75, bias=1.0),
        helper.make_node("MaxPool", ["l1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("LRN", ["r2"], ["y"], size=3, alpha=1e-4, beta=0.75, bias=2.0),
    ]
    graph = helper.make_graph(nodes, "lrn_cnn",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 12, 12])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main() -> None:
    torch.manual_seed(0)
    model = LrnCNN().eval()
    x = (torch.randn(2, 3, 12, 12) * 4).float()
    with torch.no_grad():
        want = model(x).numpy()
    ov_pt = ov.convert_model(model, example_input=x, input=[ov.PartialShape([-1, 3, 12, 12])])
    ov_onnx = ov.Core().read_model(onnx_graph(model).SerializeToString(), b"")
    for name, m in (("pytorch", ov_pt), ("onnx", ov_onnx)):
        folder = ROOT / name
        folder.mkdir(parents=True, exist_ok=True)
        ov.save_model(m, str(folder / "model.xml"))
        np.save(folder / "input.npy", x.numpy())
        np.save(folder / "expected.npy", want)
        print(name, sorted({op.get_type_name() for op in m.get_ops()}))
    print(f"wrote {ROOT}")


if __name__ == "__main__":
    main()
