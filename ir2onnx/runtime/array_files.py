"""Input arrays from files: one ``.npy`` (``--input NAME=FILE.npy``) or an ``.npz`` of several
(``<stem>.inputs.npz`` beside a model), read without trusting them.

Everything a file declares is checked before memory is set aside for it: a .npy header's shape
against the bytes the file really holds and against the limits (:mod:`ir2onnx.ir.limits`), an
.npz's member names against the model's inputs and their declared sizes against the limit, from
the zip directory alone, before a member is decompressed (a 6 MB zip can expand to 6 GiB).
Nothing is ever unpickled. A file that is not what it should be is named for what it is (empty,
an .npz given for a .npy, pickled Python data, text, or its first bytes).
"""
from __future__ import annotations

import math
import os
import zipfile
import zlib
from pathlib import Path

import numpy as np

from ..errors import Ir2OnnxError
from ..ir.limits import over_bytes, over_dims

_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"


def what_it_is(path: str | os.PathLike) -> str:
    """What ``path`` holds, in a few words, judged by its first bytes."""
    try:
        with open(path, "rb") as f:
            head = f.read(512)
    except OSError as e:
        return f"unreadable ({e.strerror})"
    if not head:
        return "an empty file (0 bytes)"
    if head.startswith(_NPY_MAGIC):
        return "a .npy file"
    if head.startswith(_ZIP_MAGIC) or head.startswith(b"PK\x05\x06"):
        try:
            with zipfile.ZipFile(path) as z:
                names = [n.removesuffix(".npy") for n in z.namelist()]
        except Exception:  # any failure to read the directory of an untrusted zip
            return "a damaged zip archive"
        shown = ", ".join(names[:4]) + (" ..." if len(names) > 4 else "")
        return f"an .npz archive (zip) of arrays {shown}" if names else "an empty zip archive"
    if head[:1] == b"\x80" and len(head) > 1 and head[1] <= 5:
        return "pickled Python data (ir2onnx never unpickles)"
    try:
        head.decode("utf-8")
        return "a text file"
    except UnicodeDecodeError as e:
        if e.start >= len(head) - 3:  # a character cut at the 512th byte
            return "a text file"
    return f"not a NumPy file (it starts with bytes {head[:8].hex(' ')})"


def _header(f, what: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """The shape, order and dtype a .npy header declares (the stream is left at the data)."""
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f".npy format version {version[0]}.{version[1]} is not read (1.0 or 2.0)")
    except Exception as e:  # numpy parses an untrusted header: any failure is the file's
        raise Ir2OnnxError(f"{what}: not a valid .npy header ({' '.join(str(e).split())[:200]})") from None
    if not all(type(d) is int and d >= 0 for d in shape):
        raise Ir2OnnxError(f"{what}: not a valid .npy header (shape {shape!r})")
    if dtype.hasobject:
        raise Ir2OnnxError(f"{what} holds Python objects (dtype {dtype}), which ir2onnx never unpickles")
    problem = over_dims(shape, what) or over_bytes(math.prod(shape) * dtype.itemsize, what)
    if problem:
        raise Ir2OnnxError(problem)
    return shape, fortran, dtype


def _array(f, what: str, available: int, start: int) -> np.ndarray:
    """The array of the .npy that begins at ``start`` in ``f`` (``available`` bytes from there)."""
    shape, fortran, dtype = _header(f, what)
    need = math.prod(shape) * dtype.itemsize
    have = available - (f.tell() - start)
    if have < need:
        raise Ir2OnnxError(f"{what}: its header declares {dtype} {list(shape)} ({need} bytes), but "
                           f"only {have} bytes of data follow (a truncated file)")
    data = bytearray(need)
    view, done = memoryview(data), 0
    while done < need:
        n = f.readinto(view[done:])
        if not n:
            raise Ir2OnnxError(f"{what}: the data ends after {done} of {need} bytes")
        done += n
    array = np.frombuffer(data, dtype=dtype, count=math.prod(shape))
    return array.reshape(shape[::-1]).T if fortran else array.reshape(shape)


def read_npy(path: str | os.PathLike, what: str) -> np.ndarray:
    """The array of a .npy file; Ir2OnnxError (``what`` names the file) for anything else."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if f.read(len(_NPY_MAGIC)) != _NPY_MAGIC:
                raise Ir2OnnxError(f"{what} is {what_it_is(path)}, not a .npy file (np.save writes one)")
            f.seek(0)
            return _array(f, what, size, 0)
    except OSError as e:
        raise Ir2OnnxError(f"{what}: cannot read it ({e.strerror})") from None


def read_npz(path: str | os.PathLike, names: list[str], what: str) -> dict[str, np.ndarray]:
    """The arrays of an .npz (``np.savez``) whose members must be named after ``names``; each
    name and declared size is checked from the zip directory before anything is decompressed."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            for info in infos:
                key = info.filename.removesuffix(".npy")
                if key not in names:
                    raise Ir2OnnxError(f"{what} holds '{key}', which is not an input of the model "
                                       f"(inputs: {', '.join(names)})")
            problem = over_bytes(sum(i.file_size for i in infos), f"{what} (its members as declared)")
            if problem:
                raise Ir2OnnxError(problem)
            arrays = {}
            for info in infos:
                with z.open(info) as member:
                    arrays[info.filename.removesuffix(".npy")] = _array(
                        member, f"{what}, member '{info.filename}'", info.file_size, 0)
            return arrays
    except zipfile.BadZipFile as e:
        is_what = what_it_is(path)
        if "zip" in is_what:
            raise Ir2OnnxError(f"{what} is a damaged .npz ({e})") from None
        raise Ir2OnnxError(f"{what} is {is_what}, not an .npz archive (np.savez writes one)") from None
    except (OSError, EOFError, RuntimeError, NotImplementedError, ValueError, zlib.error) as e:  # encryption, bad data ...
        raise Ir2OnnxError(f"{what}: cannot read it ({getattr(e, 'strerror', None) or e})") from None
