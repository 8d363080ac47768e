"""Imports every oracle module (an explicit list, like ir2onnx/ops/__init__.py)."""
from . import core  # noqa: F401
from . import batch_to_space  # noqa: F401
from . import depth_to_space  # noqa: F401
from . import convolution_backprop_data  # noqa: F401
from . import reshape  # noqa: F401
from . import shape_ops  # noqa: F401
from . import eltwise  # noqa: F401
