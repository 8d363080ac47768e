"""NumPy reference implementations of the IR operations, one module per op family with the same
name as its lowerings' module in :mod:`ir2onnx.ops` (the table: :mod:`.registry`; shared building
blocks: :mod:`.elements`). The list is explicit, like ir2onnx/ops/__init__.py (version 1 unless a
``-N`` says otherwise; Parameter is fed by the interpreter). Importing any module of this package
fills the table."""
from . import infrastructure  # noqa: F401  Const, Result
from . import conversion  # noqa: F401  Convert, ConvertLike
from . import type_promotion  # noqa: F401  ConvertPromoteTypes-14
from . import elementwise  # noqa: F401  Add, Subtract, Multiply, Divide, Maximum, Minimum, FloorMod, Mod,
#                                        SquaredDifference, Power
from . import unary  # noqa: F401  Exp, Sqrt, Erf, Log, Floor, Ceiling, Negative, Abs, Sign, Round-5,
#                                  Identity-16
from . import finiteness  # noqa: F401  IsNaN-10, IsInf-10, IsFinite-10
from . import hard_sigmoid  # noqa: F401  HardSigmoid
from . import trigonometric  # noqa: F401  Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh-4, Acosh-4,
#                                          Atanh-4
from . import activations  # noqa: F401  ReLU, Sigmoid, Tanh, Clamp, Gelu-2/-7, HSwish-4, Swish-4, PReLU, Elu,
#                                        SoftPlus-4, Mish-4, HSigmoid-5, SoftSign-9, Selu
from . import softmax  # noqa: F401  SoftMax-1/-8, LogSoftmax-5
from . import comparison  # noqa: F401  Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual
from . import logical  # noqa: F401  LogicalNot, LogicalAnd, LogicalOr, LogicalXor-2, Select
from . import bitwise  # noqa: F401  BitwiseAnd-13, BitwiseOr-13, BitwiseXor-13, BitwiseNot-13,
#                                    BitwiseLeftShift-15, BitwiseRightShift-15
from . import reduction  # noqa: F401  ReduceProd, ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceL1-4,
#                                      ReduceL2-4, ReduceLogicalAnd, ReduceLogicalOr
from . import normalization  # noqa: F401  MVN-6, GroupNormalization-12, BatchNormInference-1/-5, NormalizeL2
from . import response_normalization  # noqa: F401  LRN, GRN
from . import matmul  # noqa: F401  MatMul, Einsum-7
from . import inverse  # noqa: F401  Inverse-14
from . import transpose  # noqa: F401  Transpose, ShuffleChannels
from . import shape  # noqa: F401  ShapeOf-1/-3, Concat, Squeeze-1/-15, Unsqueeze
from . import reshape  # noqa: F401  Reshape
from . import indexing  # noqa: F401  Gather-1/-7/-8, GatherElements-6, GatherND-8, NonZero-3
from . import one_hot  # noqa: F401  OneHot-1/-16
from . import scatter  # noqa: F401  ScatterElementsUpdate-3/-12, ScatterUpdate-3, ScatterNDUpdate-4
from . import embedding  # noqa: F401  EmbeddingBagOffsetsSum-3, EmbeddingBagOffsets-15, EmbeddingBagPackedSum-3,
#                                      EmbeddingBagPacked-15, EmbeddingSegmentsSum-3
from . import segment  # noqa: F401  SegmentMax-16
from . import gather_tree  # noqa: F401  GatherTree
from . import patches  # noqa: F401  ExtractImagePatches-3, Col2Im-15
from . import bucketize  # noqa: F401  Bucketize-3, SearchSorted-15
from . import generation  # noqa: F401  Range-4, Eye-9
from . import random_ops  # noqa: F401  RandomUniform-8, Multinomial-13
from . import slicing  # noqa: F401  StridedSlice, Slice-8, SliceScatter-15
from . import split  # noqa: F401  Split, VariadicSplit
from . import broadcast  # noqa: F401  Broadcast-1/-3, Tile
from . import pad  # noqa: F401  Pad-1/-12
from . import reverse_roll  # noqa: F401  Reverse, Roll-7, ReverseSequence
from . import cumsum  # noqa: F401  CumSum-3
from . import topk  # noqa: F401  TopK-1/-3/-11
from . import batch_to_space  # noqa: F401  BatchToSpace-2, SpaceToBatch-2
from . import depth_to_space  # noqa: F401  DepthToSpace, SpaceToDepth
from . import convolution  # noqa: F401  Convolution, GroupConvolution
from . import convolution_backprop_data  # noqa: F401  ConvolutionBackpropData, GroupConvolutionBackpropData
from . import pooling  # noqa: F401  MaxPool-1/-8/-14, AvgPool-1/-14/-16
from . import adaptive_pooling  # noqa: F401  AdaptiveAvgPool-8, AdaptiveMaxPool-8
from . import interpolate  # noqa: F401  Interpolate-4/-11
from . import colour  # noqa: F401  NV12toRGB-8, NV12toBGR-8, I420toRGB-8, I420toBGR-8
from . import attention  # noqa: F401  ScaledDotProductAttention-13
from . import recurrent  # noqa: F401  LSTMSequence-5, GRUSequence-5, RNNSequence-5, LSTMCell-1/-4,
#                                       GRUCell-3, RNNCell
from . import quantization  # noqa: F401  FakeQuantize, FakeConvert
from . import roi_align  # noqa: F401  ROIAlign-3/-9
from . import roi_pooling  # noqa: F401  ROIPooling-2
from . import psroi_pooling  # noqa: F401  PSROIPooling-1
from . import deformable_psroi_pooling  # noqa: F401  DeformablePSROIPooling-1
from . import ctc_loss  # noqa: F401  CTCLoss-4
from . import signal  # noqa: F401  DFT-7, IDFT-7, RDFT-9, IRDFT-9, STFT-15
from . import grid_sample  # noqa: F401  GridSample-9
from . import unique  # noqa: F401  Unique-10
from . import non_max_suppression  # noqa: F401  NonMaxSuppression-5/-9
from . import multiclass_nms  # noqa: F401  MulticlassNms-8/-9
from . import matrix_nms  # noqa: F401  MatrixNms-8
from . import nms_rotated  # noqa: F401  NMSRotated-13
from . import prior_box  # noqa: F401  PriorBox-1/-8, PriorBoxClustered
from . import region_yolo  # noqa: F401  RegionYolo, ReorgYolo-2
from . import ctc  # noqa: F401  CTCGreedyDecoder, CTCGreedyDecoderSeqLen-6
from . import detection_output  # noqa: F401  DetectionOutput-1/-8
from . import control_flow  # noqa: F401  If-8, Loop-5, TensorIterator-1
from . import state  # noqa: F401  ReadValue-3/-6, Assign-3/-6
from . import proposal  # noqa: F401  Proposal-1/-4
from . import experimental_detectron  # noqa: F401  ExperimentalDetectronPriorGridGenerator-6,
#                                                ExperimentalDetectronTopKROIs-6, ExperimentalDetectronROIFeatureExtractor-6,
#                                                ExperimentalDetectronGenerateProposalsSingleImage-6,
#                                                ExperimentalDetectronDetectionOutput-6
from . import generate_proposals  # noqa: F401  GenerateProposals-9

from .interpreter import evaluate, missing_oracles  # noqa: E402  the package's face: run a whole Graph

__all__ = ["evaluate", "missing_oracles"]
