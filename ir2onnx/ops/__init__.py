"""Op lowerings. Each module registers its lowerings with ``@lowers``; the list is explicit so
that a missing module fails at import and grep finds every op."""
from . import infrastructure  # noqa: F401  Parameter, Const, Result, Convert
from . import batch_to_space  # noqa: F401  BatchToSpace-2, SpaceToBatch-2
from . import depth_to_space  # noqa: F401  DepthToSpace-1, SpaceToDepth-1
from . import convolution_backprop_data  # noqa: F401  (Group)ConvolutionBackpropData-1
from . import reshape  # noqa: F401  Reshape-1
from . import shape  # noqa: F401  ShapeOf, Concat, Squeeze, Unsqueeze
from . import indexing  # noqa: F401  Gather-1/-7/-8
from . import elementwise  # noqa: F401  Add, Subtract, Multiply, Divide, reductions
from . import convolution  # noqa: F401  Convolution-1, GroupConvolution-1
from . import matmul  # noqa: F401  MatMul-1
from . import transpose  # noqa: F401  Transpose-1
from . import activations  # noqa: F401  ReLU, Sigmoid, Tanh, Exp, Sqrt, Clamp, Gelu, HSwish, Swish, SoftMax
from . import softmax  # noqa: F401  SoftMax-1/-8, LogSoftmax-5
from . import pooling  # noqa: F401  MaxPool-1/-8/-14, AvgPool-1/-14
from . import slicing  # noqa: F401  StridedSlice-1, Slice-8
from . import unary  # noqa: F401  Erf, Negative, Abs, Log, Floor, Ceiling, Power
from . import comparison  # noqa: F401  Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual
from . import logical  # noqa: F401  LogicalNot/And/Or/Xor, Select
from . import reduction  # noqa: F401  ReduceMean, ReduceMax, ReduceMin
from . import normalization  # noqa: F401  MVN-6
from . import split  # noqa: F401  Split-1, VariadicSplit-1
from . import broadcast  # noqa: F401  Broadcast-1/-3, Tile-1
from . import generation  # noqa: F401  Range-4
from . import pad  # noqa: F401  Pad-1/-12
from . import attention  # noqa: F401  ScaledDotProductAttention-13
from . import interpolate  # noqa: F401  Interpolate-4/-11
from . import topk  # noqa: F401  TopK-1/-3/-11
from . import cumsum  # noqa: F401  CumSum-3
from . import scatter  # noqa: F401  GatherND-8, ScatterNDUpdate-3 (opset4)
from . import quantization  # noqa: F401  FakeQuantize-1
from . import trigonometric  # noqa: F401  Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh
from . import recurrent  # noqa: F401  LSTMSequence-5, GRUSequence-5, RNNSequence-5
from . import reverse_roll  # noqa: F401  Reverse-1, Roll-7
from . import non_max_suppression  # noqa: F401  NonMaxSuppression-5/-9, NonZero-3
from . import conversion  # noqa: F401
