"""The paths the command line is given: which IR a ``convert`` argument names, where its .onnx goes,
and whether an output path can be written, all decided before any work is done.

Every problem is an :class:`~ir2onnx.errors.Ir2OnnxError` naming the path (exit 2), never an
``OSError`` escaping as an internal error:

- an ``.onnx`` file, a ``.bin`` file or a directory given as the IR is recognised and named;
  a directory that holds exactly one ``.xml`` is that IR, and so is an optimum-intel export's
  folder (``openvino_model.xml`` beside its tokenizer IRs, which are left out of every folder);
- ``-o DIR`` (an existing directory) and ``-o DIR/`` (created when missing) mean ``DIR/<stem>.onnx``;
- an output whose folder cannot be made or written is refused before converting.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from ..errors import Ir2OnnxError
from ..writer import refuse_target

NAME_MAX = 255  # bytes in one file name (Linux, macOS, Windows)


def lookable(*args) -> None:
    """Every given input path (strings, lists of them, None) can at least be looked up: a name the
    OS refuses outright (a component over 255 bytes, ENAMETOOLONG) is bad input, said once here
    rather than by whichever ``is_dir()`` meets it first. A path that does not exist is left to
    the command, which names it in its own words."""
    for arg in args:
        for path in ([] if arg is None else arg if isinstance(arg, list) else [arg]):
            try:
                os.lstat(path)
            except (FileNotFoundError, NotADirectoryError):
                pass
            except OSError as e:
                raise Ir2OnnxError(f"cannot use the path '{path}': {e.strerror}") from None
            except ValueError as e:  # an embedded NUL byte
                raise Ir2OnnxError(f"cannot use the path {path!r}: {e}") from None


def ir_files(directory: Path) -> list[Path]:
    """The IR .xml files under ``directory`` (recursively, sorted), hidden folders left out."""
    found = []
    for path in sorted(directory.rglob("*.xml")):
        rel = path.relative_to(directory).parts
        if path.is_file() and not any(p.startswith(".") for p in rel):
            found.append(path)
    return found


# optimum-intel writes these beside its model IRs (openvino_model.xml, openvino_encoder_model.xml
# ...): openvino-tokenizers' string ops, which ONNX has none of
OPTIMUM_TOKENIZERS = ("openvino_tokenizer.xml", "openvino_detokenizer.xml")


def _tokenizer_beside_model(path: Path) -> bool:
    return path.name in OPTIMUM_TOKENIZERS and any(
        p.is_file() for p in path.parent.glob("openvino_*model.xml"))


def folder_irs(directory: Path) -> list[Path]:
    """The IRs a folder argument stands for: :func:`ir_files`, less the tokenizer and detokenizer
    IRs of optimum-intel exports (beside an ``openvino_*model.xml``), so that an optimum-intel
    folder stands for its model, and a folder of them for their models."""
    return [p for p in ir_files(directory) if not _tokenizer_beside_model(p)]


def tokenizers_left_out(args: list) -> list[Path]:
    """The tokenizer IRs :func:`folder_irs` leaves out of the folder arguments among ``args``."""
    return [p for a in args if Path(a).is_dir() for p in ir_files(Path(a)) if _tokenizer_beside_model(p)]


def model_xml(arg: str | os.PathLike) -> Path:
    """The .xml a ``convert``/``run``/``check`` argument names, or an error that says what it is."""
    path = Path(arg)
    if path.is_dir():
        xmls = folder_irs(path)
        if len(xmls) == 1:
            return xmls[0]
        if not xmls:
            raise Ir2OnnxError(f"'{arg}' is a directory with no IR .xml file in it: give the model's .xml")
        shown = ", ".join(str(p.relative_to(path)) for p in xmls[:3]) + (" ..." if len(xmls) > 3 else "")
        raise Ir2OnnxError(f"'{arg}' is a directory holding {len(xmls)} IR .xml files ({shown}): give "
                           f"one, or convert them all with 'ir2onnx convert {arg} -o OUTDIR'")
    suffix = path.suffix.lower()
    if suffix == ".onnx":
        raise Ir2OnnxError(f"'{arg}' is an ONNX model, not an OpenVINO IR: it needs no conversion "
                           f"(run it with 'ir2onnx run {arg}')")
    if suffix == ".bin":
        xml = path.with_suffix(".xml")
        hint = f" ({xml})" if xml.is_file() else ""
        raise Ir2OnnxError(f"'{arg}' is the weights file of an IR: give its .xml{hint}")
    if path.exists() and not path.is_file():
        raise Ir2OnnxError(f"'{arg}' is not a regular file")
    return path


def _is_dir_arg(arg: str) -> bool:
    try:
        return arg.endswith(("/", os.sep)) or Path(arg).is_dir()
    except OSError:  # a name too long, a loop of links: not a directory, the write says why
        return False


def onnx_output(xml: Path, output: str | os.PathLike | None, weights: str | os.PathLike | None = None,
                external_data: bool = False) -> Path:
    """Where ``convert`` writes: beside the .xml by default, ``DIR/<stem>.onnx`` for ``-o DIR`` or
    ``-o DIR/``, else the path given. The path is checked as :func:`writable`, and neither it nor
    (with ``external_data``) its .data file may be the .xml or the weights read (``weights``, else
    the .xml's .bin; the writer checks again what it writes)."""
    if output is None:
        out = xml.with_suffix(".onnx") if xml.name else Path("model.onnx")
    elif _is_dir_arg(os.fspath(output)):
        out = Path(output) / (xml.stem + ".onnx")
    else:
        out = Path(output)
    reads = (xml, Path(weights) if weights else xml.with_suffix(".bin"))
    refuse_target(out, "output", reads)
    if external_data:
        refuse_target(out.parent / (out.name + ".data"), "output's data file", reads)
    return writable(out, "output")


def writable(path: Path, what: str = "output") -> Path:
    """``path`` when a file can be written there: not a directory, and its nearest existing
    ancestor a directory this process may write into (missing folders are made when writing)."""
    path = Path(path)
    if not path.name or path.name in (".", ".."):
        raise Ir2OnnxError(f"the {what} path '{path}' names no file")
    too_long = [p for p in path.parts if len(os.fsencode(p)) > NAME_MAX]
    if too_long:
        raise Ir2OnnxError(f"the {what} path '{str(path)[:60]}...' has a name of {len(os.fsencode(too_long[0]))} "
                           f"bytes: file names have at most {NAME_MAX}")
    if path.is_dir():
        raise Ir2OnnxError(f"the {what} '{path}' is a directory: give a file name, or end it with '/'"
                           if what == "output" else f"the {what} '{path}' is a directory: give a file name")
    refuse_target(path, what)
    parent = path.parent
    while not parent.exists():
        if parent == parent.parent:
            break
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        raise Ir2OnnxError(f"cannot write the {what} '{path}': '{parent}' is not a directory")
    try:  # a real probe: permissions say nothing to root, nor of read-only or virtual file systems
        with tempfile.TemporaryFile(dir=parent, prefix=".ir2onnx-probe-"):
            pass
    except OSError as e:
        raise Ir2OnnxError(f"cannot write the {what} '{path}': the folder '{parent}' is not writable "
                           f"({e.strerror or e})") from None
    return path


@contextlib.contextmanager
def os_errors(what: str, name_file: bool = True):
    """Turn an ``OSError`` inside the block into one line, ``cannot <what> '<file>': <reason>``
    (exit 2, not 3); ``name_file=False`` leaves the file out (a temporary one, say)."""
    try:
        yield
    except Ir2OnnxError:
        raise
    except OSError as e:
        name = f" '{e.filename}'" if e.filename and name_file else ""
        raise Ir2OnnxError(f"cannot {what}{name}: {e.strerror or e}") from None
