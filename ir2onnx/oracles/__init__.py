"""NumPy reference implementations of the IR operations, one module per op family with the same
name as its lowerings' module in :mod:`ir2onnx.ops` (the table: :mod:`.registry`). The list is
explicit, like ir2onnx/ops/__init__.py: a missing module fails at import and grep finds every op.
Importing any module of this package fills the table."""
from . import infrastructure  # noqa: F401
from . import batch_to_space  # noqa: F401
from . import depth_to_space  # noqa: F401
from . import convolution_backprop_data  # noqa: F401
from . import reshape  # noqa: F401
from . import shape  # noqa: F401
from . import elementwise  # noqa: F401
from . import convolution  # noqa: F401
from . import matmul  # noqa: F401  MatMul, Transpose
from . import activations  # noqa: F401
from . import softmax  # noqa: F401  SoftMax-1/-8, LogSoftmax-5
from . import pooling  # noqa: F401
from . import slicing  # noqa: F401  StridedSlice, Slice
from . import unary  # noqa: F401
from . import comparison  # noqa: F401  comparisons, logical ops, Select
from . import reduction  # noqa: F401  ReduceMean, ReduceMax, ReduceMin
from . import normalization  # noqa: F401  MVN-6
from . import split  # noqa: F401  Split, VariadicSplit, Broadcast, Tile, Pad
from . import generation  # noqa: F401  Range-4
from . import attention  # noqa: F401  ScaledDotProductAttention-13
from . import interpolate  # noqa: F401  Interpolate-4/-11
from . import topk  # noqa: F401  TopK-1/-3/-11
from . import cumsum  # noqa: F401  CumSum-3
from . import scatter  # noqa: F401  GatherND-8, ScatterNDUpdate-3 (opset4)
from . import quantization  # noqa: F401  FakeQuantize-1
from . import trigonometric  # noqa: F401  Sin, Cos, Tan, Asin, ... Atanh
from . import recurrent  # noqa: F401  LSTMSequence-5, GRUSequence-5, RNNSequence-5
from . import reverse_roll  # noqa: F401  Reverse-1, Roll-7
from . import non_max_suppression  # noqa: F401  NonMaxSuppression-5/-9, NonZero-3
from . import conversion  # noqa: F401
from . import transpose  # noqa: F401
from . import logical  # noqa: F401
from . import indexing  # noqa: F401
from . import broadcast  # noqa: F401
from . import pad  # noqa: F401
