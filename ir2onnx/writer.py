"""Write a :class:`~ir2onnx.lowering.convert.Converted` model to disk: streamed, checked, atomic.

The initializers' bytes are never gathered into one in-memory protobuf. The file is written as
the model without initializers followed by one ``graph { initializer { ... } }`` fragment per
tensor: protobuf merges repeated occurrences of a message field, so the result is the same
ModelProto that ``SerializeToString`` would give, but peak memory stays near one tensor.
With external data the bytes are copied from the .bin into ``OUT.onnx.data`` by the kernel
(``os.copy_file_range`` / ``sendfile``), without passing through Python memory.

Everything is written into a temporary folder beside the output, flushed to disk (fsync), checked
with ``onnx.checker.check_model(full_check=True)`` and only then renamed into place, so a failure
leaves no partial file and a crash leaves the old file or none. The temporary names carry this
process's id (:func:`temp_prefix`): a run into a folder removes the temporaries that a killed run
of this machine left there (:func:`sweep_stale_temps`), never those of a process still alive.
An output is never a directory, a FIFO or a device node, nor a file that the conversion reads
(:func:`refuse_target`).
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import socket
import stat
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import onnx
from onnx import TensorProto

from .errors import Ir2OnnxError
from .ir.graph import ConstData
from .lowering.builder import Deferred, TensorEntry
from .lowering.convert import Converted

PROTOBUF_LIMIT = 2**31 - 1
EXTERNAL_THRESHOLD = 1024  # tensors at least this big go to the .data file (as onnx does)
_GRAPH_FIELD, _INITIALIZER_FIELD, _RAW_DATA_FIELD = 7, 5, 9
_CHUNK = 64 * 2**20


_TEMP_RE = re.compile(r"^\.[\w.-]*\.ir2onnx-tmp-(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-[a-z0-9_]{8}$")


def _host_tag() -> str:
    """This machine and pid namespace, so that a process id in a temporary name is judged only
    where it means this process (a folder may be shared by containers or over NFS)."""
    try:
        ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        ns = ""
    return hashlib.sha1(f"{socket.gethostname()}/{ns}".encode()).hexdigest()[:8]


def temp_prefix(name: str) -> str:
    """The prefix of a temporary beside the file ``name``: hidden, its first 40 characters (a
    legal 255-byte name leaves room for the temporary's), this machine and this process's id;
    ``mkdtemp``/``mkstemp`` add 8 random characters."""
    short = re.sub(r"[^\w.-]", "_", name, flags=re.ASCII)[:40]
    return f".{short}.ir2onnx-tmp-{_host_tag()}-{os.getpid()}-"


_OWN_TEMPS: set[str] = set()  # this process's temporaries not yet removed


def remove_own_temps() -> None:
    """Remove this process's temporaries that are still there (a signal interrupted the cleanup
    that would have removed them): called on the way out of an interrupted command."""
    for path in list(_OWN_TEMPS):
        with contextlib.suppress(OSError):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        _OWN_TEMPS.discard(path)


_holding = 0  # > 0 while a temporary is being made and recorded
_held: list[int] = []  # signals that arrived meanwhile


def hold_signal(signum: int) -> bool:
    """For a signal handler: True when ``signum`` arrived while a temporary is being made (it is
    raised again as soon as the temporary is recorded, so that it is removed on the way out)."""
    if _holding:
        _held.append(signum)
        return True
    return False


@contextlib.contextmanager
def _signals_held():
    """Make and record a temporary without a signal in between (the handlers call
    :func:`hold_signal`; masking the signal would not do: another thread, numpy's BLAS pool,
    would take it while this one runs on)."""
    global _holding
    _holding += 1
    try:
        yield
    finally:
        _holding -= 1
    if not _holding and _held:
        signal.raise_signal(_held.pop(0))
        _held.clear()


def _made(path: str) -> str:
    _OWN_TEMPS.add(path)
    return path


@contextlib.contextmanager
def temporary_folder(prefix: str = "ir2onnx-"):
    """A temporary folder (in the system's temp dir) that is removed on the way out, also when a
    signal (:func:`ir2onnx.cli.main`'s handlers) ends the program. It is named like the
    temporaries beside an output (:func:`temp_prefix`: this machine and process), so that the
    folders of a process killed by SIGKILL are swept by the next one."""
    path = None
    folder = tempfile.gettempdir()
    sweep_stale_temps(folder)
    try:
        with _signals_held():  # (a signal held here is raised on leaving it, path set)
            path = _made(tempfile.mkdtemp(prefix=temp_prefix(prefix.strip("-") or "ir2onnx"), dir=folder))
        yield path
    finally:
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)
            _OWN_TEMPS.discard(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def sweep_stale_temps(folder: str | os.PathLike) -> list[str]:
    """Remove from ``folder`` the temporaries of ir2onnx processes of this machine that no longer
    run (killed while writing); returns their names. A live process's temporary is left alone."""
    removed, host = [], _host_tag()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        m = _TEMP_RE.match(entry.name)
        if not m or m["host"] != host or int(m["pid"]) == os.getpid() or _alive(int(m["pid"])):
            continue
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
            removed.append(entry.name)
    return removed


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


def refuse_target(path: str | os.PathLike, what: str = "output",
                  reads: tuple = ()) -> None:
    """Raise unless ``path`` may be replaced by a new file: it is absent or a regular file, and
    it is none of the files ``reads`` (compared by identity, st_dev and st_ino: another name,
    a hard link or a symlink of an input is that input)."""
    try:
        st = os.stat(path)
    except OSError:
        return  # absent (or unreachable: the write itself then says why)
    for is_kind, kind in _KINDS:
        if is_kind(st.st_mode):
            raise Ir2OnnxError(f"the {what} '{path}' is {kind}, not a file: give a file name")
    for given in reads:
        if given is None:
            continue
        with contextlib.suppress(OSError):
            other = os.stat(given)
            if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                raise Ir2OnnxError(f"the {what} '{path}' is the input '{given}': writing it would "
                                   f"destroy what is read; choose another name")


def _umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "wb", *, what: str = "output", reads: tuple = ()):
    """Yield a file object whose contents become ``path`` only when the block ends without an
    error: written to a temporary beside it, flushed to disk (fsync), then renamed over it. On
    any error or signal the temporary is removed and ``path`` is untouched."""
    path = Path(path)
    refuse_target(path, what, reads)
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep_stale_temps(path.parent)
    fd = tmp = None
    try:
        with _signals_held():  # (a signal held here is raised on leaving it, fd and tmp set)
            fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path.name), dir=path.parent)
            _made(tmp)
        f = os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"}))
        fd = None  # f owns it
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        if fd is not None:
            os.close(fd)
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    finally:
        _OWN_TEMPS.discard(tmp)
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """fsync a folder, so that a rename in it survives a power cut (where the OS allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, length: int) -> bytes:
    """The key and length prefix of a length-delimited field."""
    return _varint(number << 3 | 2) + _varint(length)


def _copy_range(src: ConstData, dst) -> None:
    """Copy a Const's bytes from the .bin into the open file ``dst``, kernel to kernel."""
    dst.flush()
    with open(src.bin.path, "rb") as f:
        offset, left = src.offset, src.size
        while left:
            try:
                n = os.copy_file_range(f.fileno(), dst.fileno(), min(left, _CHUNK), offset)
            except (AttributeError, OSError):
                f.seek(offset)
                n = len(chunk := f.read(min(left, _CHUNK)))
                dst.write(chunk)
                dst.flush()
            if n == 0:
                raise Ir2OnnxError(f"'{src.bin.path}' ended early while copying weights")
            offset += n
            left -= n
    dst.seek(0, os.SEEK_END)


class Progress:
    """Reports, on stderr, how much of the weights is written, for models big enough to wait for."""

    MIN_BYTES = 256 * 2**20

    def __init__(self, total: int):
        self.total, self.done, self.shown = total, 0, 0
        self.enabled = total >= self.MIN_BYTES

    def add(self, n: int) -> None:
        self.done += n
        step = self.done * 10 // max(self.total, 1)
        if self.enabled and step > self.shown:
            self.shown = step
            print(f"ir2onnx: writing weights {self.done / 2**20:.0f}/{self.total / 2**20:.0f} MiB "
                  f"({step * 10}%)", file=sys.stderr, flush=True)


def _write_bytes(t: TensorEntry, out, progress: Progress, made=None) -> None:
    if isinstance(t.data, ConstData):
        _copy_range(t.data, out)
    else:
        out.write(t.raw_bytes() if made is None else made)
    progress.add(t.nbytes)


def _made_ahead(tensors: list[TensorEntry]):
    """(tensor, its bytes if made at write time, else None) for each tensor. The bytes of each
    Deferred tensor (a weight transposed for MatMulNBits) are made one tensor ahead in a worker
    thread, so that making the next overlaps writing this one (NumPy, onnxruntime and file
    writes release the GIL); at most two such tensors are in memory."""
    made_late = [t for t in tensors if isinstance(t.data, Deferred) and t.alias is None]
    if len(made_late) < 2:
        yield from ((t, None) for t in tensors)
        return
    with ThreadPoolExecutor(1) as pool:
        pending = iter(made_late)
        futures = {}

        def submit_next() -> None:
            t = next(pending, None)
            if t is not None:
                futures[t.name] = pool.submit(t.raw_bytes)

        submit_next()
        for t in tensors:
            if t.name in futures:
                made = futures.pop(t.name).result()
                submit_next()
                yield t, made
            else:
                yield t, None


def _stream_single(conv: Converted, path: Path, progress: Progress) -> None:
    conv = conv.without_aliases()
    with open(path, "wb") as out:
        out.write(conv.model.SerializeToString())
        for t, made in _made_ahead(conv.tensors):
            meta = t.skeleton().SerializeToString()
            n = t.nbytes
            tensor = meta + _field(_RAW_DATA_FIELD, n)
            tensor_len = len(tensor) + n
            out.write(_field(_GRAPH_FIELD, len(_field(_INITIALIZER_FIELD, tensor_len)) + tensor_len))
            out.write(_field(_INITIALIZER_FIELD, tensor_len))
            out.write(tensor)
            _write_bytes(t, out, progress, made)
        out.flush()
        os.fsync(out.fileno())


def _stream_external(conv: Converted, path: Path, progress: Progress) -> None:
    if any(t.alias is not None and t.nbytes < EXTERNAL_THRESHOLD for t in conv.tensors):
        conv = conv.without_aliases()  # too small to share bytes in the .data file
    model = onnx.ModelProto()
    model.CopyFrom(conv.model)
    data_name = path.name + ".data"
    protos, offsets = [], {}
    with open(path.parent / data_name, "wb") as data:
        for t, made in _made_ahead(conv.tensors):
            proto = t.skeleton()
            protos.append(proto)
            if t.alias is not None:
                continue  # its bytes are the other tensor's, written once
            if t.nbytes < EXTERNAL_THRESHOLD:
                proto.raw_data = bytes(t.raw_bytes() if made is None else made)
            else:
                pad = (-data.tell()) % 4096  # page-aligned, so runtimes can map tensors directly
                data.write(b"\0" * pad)
                offsets[t.name] = data.tell()
                _write_bytes(t, data, progress, made)
        data.flush()
        os.fsync(data.fileno())
    for t, proto in zip(conv.tensors, protos):
        offset = offsets.get(t.alias or t.name)
        if offset is not None:
            proto.data_location = TensorProto.EXTERNAL
            for key, value in (("location", data_name), ("offset", offset), ("length", t.nbytes)):
                entry = proto.external_data.add()
                entry.key, entry.value = key, str(value)
        model.graph.initializer.append(proto)
    with open(path, "wb") as out:
        out.write(model.SerializeToString())
        out.flush()
        os.fsync(out.fileno())


def needs_external_data(conv: Converted) -> bool:
    """True when one protobuf file cannot hold the model (2 GiB limit, with room for the graph)."""
    return conv.weight_bytes + conv.model.ByteSize() + 64 * 2**20 > PROTOBUF_LIMIT


def save(conv: Converted, output: str | os.PathLike, *, external_data: bool | None = None,
         check: bool = True, verify: Callable[[Path], None] | None = None, reads: tuple = ()) -> Path:
    """Write ``conv`` to ``output`` (plus ``output.data`` with external data), atomically.

    ``external_data=None`` chooses external data only when the model is over the protobuf limit.
    ``verify(path)`` runs on the finished temporary file before it is moved into place: when it
    raises, nothing is written. ``reads``: the files the conversion reads (the .xml, the .bin),
    which neither ``output`` nor its .data file may be.
    """
    output = Path(output)
    refuse_target(output, "output", reads)
    if external_data is None:
        external_data = needs_external_data(conv)
        if external_data:
            print(f"ir2onnx: the weights ({conv.weight_bytes / 2**30:.2f} GiB) exceed one protobuf; "
                  f"writing them to {output.name}.data", file=sys.stderr)
    elif not external_data and needs_external_data(conv):
        raise Ir2OnnxError("the model is over 2 GiB and cannot be one file: use external data")
    if external_data:
        refuse_target(output.parent / (output.name + ".data"), "output's data file", reads)
        if len(os.fsencode(output.name + ".data")) > 255:
            raise Ir2OnnxError(f"the output name '{output.name}' is too long for its data file "
                               f"'{output.name}.data' (255 bytes at most): choose a shorter one")
    output.parent.mkdir(parents=True, exist_ok=True)
    sweep_stale_temps(output.parent)
    tmpdir = None
    try:
        with _signals_held():  # (a signal held here is raised on leaving it, tmpdir set)
            tmpdir = Path(_made(tempfile.mkdtemp(prefix=temp_prefix(output.name), dir=output.parent)))
        tmp = tmpdir / output.name
        progress = Progress(conv.weight_bytes)
        (_stream_external if external_data else _stream_single)(conv, tmp, progress)
        if progress.enabled and check:
            print("ir2onnx: checking the model with onnx.checker (full_check)", file=sys.stderr, flush=True)
        if check:
            try:
                onnx.checker.check_model(str(tmp), full_check=True)
            except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise Ir2OnnxError(f"internal error: the ONNX model failed onnx.checker: {first}") from e
        if verify is not None:
            verify(tmp)
        if external_data:
            os.replace(tmpdir / (output.name + ".data"), output.parent / (output.name + ".data"))
        os.replace(tmp, output)
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
            _OWN_TEMPS.discard(str(tmpdir))
    _sync_folder(output.parent)
    return output
