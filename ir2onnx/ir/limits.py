"""The limits ir2onnx holds every model and every input to, in one place (docs/paths-names-inputs.md).

Each is checked by arithmetic on what a file declares (dims, sizes, nesting) before anything of
that size is allocated; going over one is bad input: one line naming the limit, exit code 2. They
sit far above what any real model needs and far below what would exhaust a machine or a library
(protobuf refuses messages nested deeper than 100 levels; an If body costs about three).
"""
from __future__ import annotations

import math

MAX_DIM = 2**36          # one dim of a tensor: a declared port, a shape attribute, --shape
MAX_ELEMENTS = 2**36     # elements of one tensor that is declared static or computed at convert time
MAX_INPUT_BYTES = 4 * 2**30  # one input array generated, read from a .npy, or the members of an .npz
MAX_BODY_DEPTH = 16      # If / Loop / TensorIterator bodies nested inside one another


def over_dims(dims, what: str) -> str | None:
    """Why the static ``dims`` (None for a dynamic one) break a limit, or None: ``what`` names them."""
    static = [d for d in dims if d is not None]
    big = next((d for d in static if d > MAX_DIM), None)
    if big is not None:
        return f"{what}: dimension {big} is over the limit of {MAX_DIM} (2^36)"
    count = math.prod(static)
    if count > MAX_ELEMENTS:
        return f"{what}: {count} elements are over the limit of {MAX_ELEMENTS} (2^36) elements per tensor"
    return None


def over_bytes(nbytes: int, what: str) -> str | None:
    """Why an input array of ``nbytes`` breaks :data:`MAX_INPUT_BYTES`, or None."""
    if nbytes > MAX_INPUT_BYTES:
        return f"{what} would need {nbytes / 2**30:.1f} GiB, over the limit of {MAX_INPUT_BYTES // 2**30} GiB per input"
    return None
