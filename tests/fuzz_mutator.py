"""A seeded mutator over the bundled IRs and ``--input`` files, and a runner that feeds each mutant
to the real command line in a child process under a memory and a time limit (tests/test_fuzz.py).

A case is a number: ``case(n)`` derives everything from it (the base IR of :data:`CORPUS`, the
mutation, its details, the command), so a failure names a case that reproduces anywhere::

    python tests/fuzz_mutator.py 123            # writes the case's files, runs it, prints the verdict
    python tests/fuzz_mutator.py 0-99 --summary  # counts by exit code

Every case must end with exit 0, 1 (``check`` only) or 2; on exit 2 stderr is one error line (after
``ir2onnx: warning:`` lines of a step that went through, if any: ``run`` converts first); no traceback,
no ``internal error``; nothing left in the output folder on failure and no temporary files anywhere.

The runner forks each case from a server process that has imported ir2onnx once (0.1 s a case
instead of an interpreter start); ``FUZZ_RUNNER=subprocess`` runs ``python -m ir2onnx`` instead.
"""
from __future__ import annotations

import io
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"

# small, varied IRs: plain layers, int and float weights, compressed weights, If and Loop bodies
CORPUS = [
    "reshape/example1", "reshape/example3", "depth_to_space/ov_depth_first",
    "framework/integer_power/int8", "bucketize/bucketize_left", "framework/flatten/two",
    "signal/rfft", "convolution_backprop_data/example1", "unique/int_matrix",
    "embedding_bag/packed", "framework/fake_quantize/positive", "dynamic/topk/model",
    "torch_if/torch_if", "torch_loop/torch_loop", "real/cnn/model", "real/attention/model",
    "decoder/decoder", "real/mlp_nf4/model", "lrn_cnn/onnx/model",
]

MEMORY_LIMIT = 3 * 2**30  # address space a case may add to the runner's (RLIMIT_AS)
TIME_LIMIT = 60.0  # seconds: more is a hang

ODD_VALUES = ["", "-1", "0", "1e309", "nan", "-inf", "abc", "99999999999999999999", "1,2,3", " ",
              "-9223372036854775809", "1099511627776", "0x10", "true", "3.5", "\u00e9", "2,-1"]
ELEMENT_TYPES = ["f32", "f16", "bf16", "f64", "i8", "u8", "i32", "i64", "u1", "u4", "i4", "nf4",
                 "f8e4m3", "boolean", "string", "dynamic", "undefined", "bogus", "", "FP32", "I64"]
ODD_NAMES = ["", "file", "a/b", "..", "x" * 5000, "\u00fcber \u6f22\u5b57", "name with spaces",
             "new\nline", "a:b;c", "-o", "y", "x"]
DIMS = ["0", "-1", "-2", "1099511627776", "4611686018427387904", "9223372036854775807",
        "18446744073709551616", "?", "abc", "", "1.5", "100000000"]


@dataclass
class Case:
    """One fuzz case: its number, what was done, the files and the command (``{dir}`` stands for
    the case's folder)."""

    id: int
    base: str
    mutation: str
    detail: str = ""
    files: dict[str, bytes] = field(default_factory=dict)
    argv: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"case {self.id}: {self.mutation} on {self.base} ({self.detail}): ir2onnx {' '.join(self.argv)}"[:400]


# -- the mutations ---------------------------------------------------------------------------
class Mutant:
    """The base IR as an element tree plus its .bin, mutated in place."""

    def __init__(self, rng: random.Random, xml: bytes, bin_: bytes | None):
        self.rng, self.root, self.bin = rng, ET.fromstring(xml), bin_
        self.raw: bytes | None = None  # set by byte-level mutations of the .xml
        self.nest = b""  # deep nesting, put in as text (ElementTree recurses to serialize)

    def layers(self):
        return list(self.root.iter("layer"))

    def top_layers(self):
        layers = self.root.find("layers")
        return [] if layers is None else list(layers.findall("layer"))

    def edges(self):
        return list(self.root.iter("edge"))

    def ports(self):
        return list(self.root.iter("port"))

    def pick(self, items):
        return self.rng.choice(items) if items else None

    def xml_bytes(self) -> bytes:
        if self.raw is not None:
            return self.raw
        text = b'<?xml version="1.0"?>\n' + ET.tostring(self.root, encoding="utf-8", xml_declaration=False)
        return text.replace(b"<fuzz_nest />", self.nest)


def _byte_flips(m: Mutant) -> str:
    data = bytearray(m.xml_bytes())
    n = m.rng.randint(1, 8)
    for _ in range(n):
        i = m.rng.randrange(len(data))
        data[i] ^= 1 << m.rng.randrange(8)
    m.raw = bytes(data)
    return f"{n} bit flip(s)"


def _truncate_xml(m: Mutant) -> str:
    data = m.xml_bytes()
    cut = m.rng.randrange(len(data))
    m.raw = data[:cut]
    return f"xml cut at {cut} of {len(data)}"


def _delete_attribute(m: Mutant) -> str:
    el = m.pick([e for e in m.root.iter() if e.attrib])
    key = m.rng.choice(sorted(el.attrib))
    del el.attrib[key]
    return f"<{el.tag}> lost '{key}'"


def _wrong_attribute(m: Mutant) -> str:
    el = m.pick([e for e in m.root.iter() if e.attrib])
    key = m.rng.choice(sorted(el.attrib))
    value = m.rng.choice(ODD_VALUES + ["x" * 100000])
    el.set(key, value)
    return f"<{el.tag}> {key}={value[:20]!r}"


def _data_attribute(m: Mutant) -> str:
    """An op attribute (in <data>) set to an odd value, or an unknown one added."""
    datas = [d for d in m.root.iter("data")]
    d = m.pick(datas)
    if d is None:
        return _wrong_attribute(m)
    if d.attrib and m.rng.random() < 0.8:
        key = m.rng.choice(sorted(d.attrib))
    else:
        key = m.rng.choice(["axis", "bogus", "offset", "shape", "element_type", "special_zero"])
    value = m.rng.choice(ODD_VALUES)
    d.set(key, value)
    return f"<data> {key}={value!r}"


PLAUSIBLE = ["0", "1", "2", "3", "-1", "-2", "100", "1,1", "0,0", "2,2", "1,2,3,4", "numpy", "none",
             "explicit", "same_upper", "valid", "true", "false", "f16", "i32", "0.5", "-0.5"]


def _plausible_attribute(m: Mutant) -> str:
    """An op attribute given another value of a plausible kind: it passes the schema's type check
    and reaches the lowering's own validation."""
    d = m.pick([d for d in m.root.iter("data") if d.attrib])
    if d is None:
        return _dims(m)
    key = m.rng.choice(sorted(d.attrib))
    value = m.rng.choice(PLAUSIBLE)
    d.set(key, value)
    return f"<data> {key}={value!r}"


def _swap_inputs(m: Mutant) -> str:
    """Two edges into the same layer swap their ports (well-formed, wrong shapes or types)."""
    by_target: dict[str, list] = {}
    for e in m.edges():
        by_target.setdefault(e.get("to-layer"), []).append(e)
    pairs = [es for es in by_target.values() if len(es) >= 2]
    if not pairs:
        return _bad_edge(m)
    a, b = m.rng.sample(m.rng.choice(pairs), 2)
    pa, pb = a.get("to-port"), b.get("to-port")
    a.set("to-port", pb)
    b.set("to-port", pa)
    return f"inputs {pa} and {pb} of layer {a.get('to-layer')} swapped"


def _element_type(m: Mutant) -> str:
    t = m.rng.choice(ELEMENT_TYPES)
    if m.rng.random() < 0.5:
        d = m.pick([d for d in m.root.iter("data") if "element_type" in d.attrib])
        if d is not None:
            old = d.get("element_type")
            d.set("element_type", t)
            return f"element_type {old} -> {t}"
    p = m.pick([p for p in m.ports() if "precision" in p.attrib])
    if p is None:
        return _wrong_attribute(m)
    old = p.get("precision")
    p.set("precision", t.upper())
    return f"port precision {old} -> {t.upper()}"


def _version(m: Mutant) -> str:
    layer = m.pick(m.layers())
    value = m.rng.choice(["opset0", "opset999", "", "bogus", "opset1", "opset3", "opset8", "opset15", None])
    if value is None:
        layer.attrib.pop("version", None)
        return f"layer {layer.get('id')} lost its version"
    layer.set("version", value)
    if m.rng.random() < 0.3:
        m.root.set("version", m.rng.choice(["9", "10", "11", "12", "0", "x"]))
    return f"layer {layer.get('id')} ({layer.get('type')}) version {value!r}"


def _layer_type(m: Mutant) -> str:
    layer = m.pick(m.layers())
    new = m.rng.choice(["Bogus", "", "Const", "Parameter", "Result", "Add", "Convolution", "If",
                        "Loop", "Reshape", "Concat", "Split", "TensorIterator"])
    old = layer.get("type")
    layer.set("type", new)
    return f"layer {layer.get('id')} type {old} -> {new!r}"


def _offset_size(m: Mutant) -> str:
    d = m.pick([d for d in m.root.iter("data") if "offset" in d.attrib or "size" in d.attrib])
    if d is None:
        return _short_bin(m)
    key = m.rng.choice([k for k in ("offset", "size") if k in d.attrib])
    size = len(m.bin or b"")
    value = m.rng.choice([str(size), str(size + 1), "-1", "-8", "1", "3", str(2**40), str(2**63),
                          str(2**64 + 4), "0", str(2**31 - 1)])
    d.set(key, value)
    return f"Const {key}={value} (.bin {size} B)"


def _dims(m: Mutant) -> str:
    p = m.pick([p for p in m.ports() if p.find("dim") is not None] or m.ports())
    if p is None:
        return _wrong_attribute(m)
    dims = p.findall("dim")
    choice = m.rng.random()
    if dims and choice < 0.6:
        dim = m.rng.choice(dims)
        dim.text = m.rng.choice(DIMS)
        return f"port dim -> {dim.text!r}"
    if dims and choice < 0.8:
        p.remove(m.rng.choice(dims))
        return "a port dim removed"
    for _ in range(m.rng.choice([1, 2, 9, 40])):
        ET.SubElement(p, "dim").text = m.rng.choice(["1", "2", "0", "7"])
    return "port dims added"


def _cycle(m: Mutant) -> str:
    layers = [l for l in m.top_layers() if l.find("input") is not None and l.find("output") is not None]
    edges_el = m.root.find("edges")
    if len(layers) < 2 or edges_el is None:
        return _bad_edge(m)
    a, b = m.rng.sample(layers, 2)
    out_port = a.find("output").find("port")
    in_port = b.find("input").find("port")
    if out_port is None or in_port is None:
        return _bad_edge(m)
    ET.SubElement(edges_el, "edge", {"from-layer": a.get("id"), "from-port": out_port.get("id"),
                                     "to-layer": b.get("id"), "to-port": in_port.get("id")})
    # and the other way round, which closes a loop whenever a feeds b somewhere
    out_b, in_a = b.find("output").find("port"), a.find("input").find("port")
    if out_b is not None and in_a is not None:
        ET.SubElement(edges_el, "edge", {"from-layer": b.get("id"), "from-port": out_b.get("id"),
                                         "to-layer": a.get("id"), "to-port": in_a.get("id")})
    return f"edges {a.get('id')} <-> {b.get('id')}"


def _duplicate_id(m: Mutant) -> str:
    layers = m.top_layers()
    if len(layers) < 2:
        return _wrong_attribute(m)
    a, b = m.rng.sample(layers, 2)
    if m.rng.random() < 0.5:
        a.set("id", b.get("id"))
        return f"layer id {b.get('id')} twice"
    p = m.pick(a.findall("./*/port"))
    if p is None or len(a.findall("./*/port")) < 2:
        a.set("id", b.get("id"))
        return f"layer id {b.get('id')} twice"
    other = m.rng.choice([q for q in a.findall("./*/port") if q is not p])
    p.set("id", other.get("id"))
    return f"port id {other.get('id')} twice in layer {a.get('id')}"


def _bad_edge(m: Mutant) -> str:
    edges = m.edges()
    e = m.pick(edges)
    if e is None:
        return _wrong_attribute(m)
    what = m.rng.randrange(4)
    if what == 0:
        for parent in m.root.iter():
            if e in list(parent):
                parent.remove(e)
                break
        return "an edge removed"
    if what == 1:
        key = m.rng.choice(["from-layer", "to-layer"])
        e.set(key, m.rng.choice(["99999", "-1", "x", ""]))
        return f"edge {key}={e.get(key)!r}"
    if what == 2:
        key = m.rng.choice(["from-port", "to-port"])
        e.set(key, m.rng.choice(["99", "-1", "7", "0", "1", ""]))
        return f"edge {key}={e.get(key)!r}"
    parent = next(p for p in m.root.iter() if e in list(p))
    parent.append(ET.Element("edge", dict(e.attrib)))  # the same input fed twice
    return "an edge duplicated"


def _deep_nesting(m: Mutant) -> str:
    layer = m.pick(m.layers())
    depth = m.rng.choice([50, 500, 5000])
    tag = m.rng.choice([b"data", b"body", b"layers", b"x"])
    ET.SubElement(layer, "fuzz_nest")
    m.nest = b"<%s>" % tag * depth + b"</%s>" % tag * depth
    return f"{depth} nested elements in layer {layer.get('id')}"


def _short_bin(m: Mutant) -> str:
    size = len(m.bin or b"")
    cut = m.rng.randrange(size) if size else 0
    m.bin = (m.bin or b"")[:cut]
    return f".bin cut to {cut} of {size} B"


def _odd_names(m: Mutant) -> str:
    name = m.rng.choice(ODD_NAMES)
    if m.rng.random() < 0.5:
        layer = m.pick(m.layers())
        layer.set("name", name)
        return f"layer {layer.get('id')} named {name[:20]!r}"
    p = m.pick([p for p in m.ports()])
    p.set("names", m.rng.choice([name, f"{name},{name}", "a,,b", ","]))
    return f"port names {p.get('names')[:20]!r}"


def _remove_layer(m: Mutant) -> str:
    layers_el = m.root.find("layers")
    layer = m.pick(m.top_layers())
    if layer is None:
        return _wrong_attribute(m)
    layers_el.remove(layer)
    return f"layer {layer.get('id')} ({layer.get('type')}) removed, its edges kept"


def _huge_text(m: Mutant) -> str:
    el = m.pick([e for e in m.root.iter()])
    el.set("junk", "y" * m.rng.choice([10**5, 10**6]))
    return f"a long attribute on <{el.tag}>"


def _bin_bytes(m: Mutant) -> str:
    if not m.bin:
        return _offset_size(m)
    data = bytearray(m.bin)
    for _ in range(m.rng.randint(1, 16)):
        i = m.rng.randrange(len(data))
        data[i] = m.rng.choice([0, 0xFF, 0x7F, 0x80, m.rng.randrange(256)])
    m.bin = bytes(data)
    return ".bin bytes changed (NaN, Inf, huge or negative values)"


IR_MUTATIONS = {
    "byte_flips": _byte_flips, "truncate_xml": _truncate_xml, "delete_attribute": _delete_attribute,
    "wrong_attribute": _wrong_attribute, "data_attribute": _data_attribute,
    "element_type": _element_type, "version": _version, "layer_type": _layer_type,
    "offset_size": _offset_size, "dims": _dims, "cycle": _cycle, "duplicate_id": _duplicate_id,
    "bad_edge": _bad_edge, "deep_nesting": _deep_nesting, "short_bin": _short_bin,
    "odd_names": _odd_names, "remove_layer": _remove_layer, "huge_text": _huge_text,
    "bin_bytes": _bin_bytes, "plausible_attribute": _plausible_attribute, "swap_inputs": _swap_inputs,
}


# -- --input files ---------------------------------------------------------------------------
def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def _npz(arrays: dict) -> bytes:
    buf = io.BytesIO()  # (np.savez cannot take a member named 'file')
    with zipfile.ZipFile(buf, "w") as z:
        for name, value in arrays.items():
            z.writestr(f"{name}.npy", _npy(value))
    return buf.getvalue()


def input_file(rng: random.Random, name: str) -> tuple[str, bytes, str]:
    """A mutated input file for input ``name``: (file name, bytes, what)."""
    shape = tuple(rng.choice([0, 1, 2, 3, 4]) for _ in range(rng.choice([0, 1, 2, 3, 4])))
    dtype = rng.choice(["float32", "float16", "float64", "int64", "int32", "int8", "uint8", "bool",
                        "complex64", "<U3", ">f4"])
    array = np.zeros(shape, dtype)
    good = _npy(array)
    kind = rng.choice(["array", "flip", "cut", "empty", "header", "npz_text", "npz_names", "npz_cut",
                       "fortran", "pickled", "npz_members", "big_header", "text"])
    if kind == "array":
        return "in.npy", good, f"{dtype}{list(shape)}"
    if kind == "flip":
        data = bytearray(good)
        for _ in range(rng.randint(1, 6)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        return "in.npy", bytes(data), "bits flipped"
    if kind == "cut":
        return "in.npy", good[:rng.randrange(len(good))], "cut short"
    if kind == "empty":
        return "in.npy", b"", "0 bytes"
    if kind == "header":
        header = rng.choice(["{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
                             "{'descr': 'xx', 'fortran_order': False, 'shape': (2,), }",
                             "{'descr': '<f4', 'fortran_order': 3, 'shape': (2,), }",
                             "{'descr': '<f4', 'shape': (2,), }", "[1, 2]",
                             "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 'a'), }"])
        body = header.encode() + b" " * (118 - len(header)) + b"\n"
        return "in.npy", b"\x93NUMPY\x01\x00" + len(body).to_bytes(2, "little") + body + b"\0" * 8, header[:30]
    if kind == "big_header":
        header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (
            rng.choice([2**20, 2**31, 10**9]), rng.choice([2**20, 2**12]))
        body = header.encode() + b" " * (118 - len(header)) + b"\n"
        return "in.npy", b"\x93NUMPY\x01\x00" + len(body).to_bytes(2, "little") + body, "a huge shape, no data"
    if kind == "fortran":
        return "in.npy", _npy(np.asfortranarray(np.zeros((2, 3), np.float32))), "fortran order"
    if kind == "pickled":
        buf = io.BytesIO()
        np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        return "in.npy", buf.getvalue(), "pickled objects"
    if kind == "text":
        return "in.npy", b"root:x:0:0:root:/root:/bin/bash\n", "a text file"
    if kind == "npz_text":
        return "in.npz", b"PK\x03\x04 not really a zip", "a .npz that is no zip"
    if kind == "npz_cut":
        data = _npz({name: array})
        return "in.npz", data[:rng.randrange(len(data))], ".npz cut short"
    if kind == "npz_members":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr(f"{name}.npy", good)
            z.writestr("../evil.npy", good)
            z.writestr("dir/", b"")
        return "in.npz", buf.getvalue(), "odd members"
    return "in.npz", _npz({rng.choice([name, "other", "file"]): array}), "npz named"


# -- the case ---------------------------------------------------------------------------------
def _input_names(xml: bytes) -> list[str]:
    root = ET.fromstring(xml)
    layers = root.find("layers")
    names = []
    for layer in ([] if layers is None else layers.findall("layer")):
        if layer.get("type") == "Parameter":
            port = layer.find("output/port")
            given = (port.get("names") or "") if port is not None else ""
            names.append(given.split(",")[0] if given else layer.get("name"))
    return names


def _dims_text(rng: random.Random) -> str:
    return ",".join(rng.choice(["1", "2", "3", "0", "8", "100000"]) for _ in range(rng.choice([0, 1, 2, 3, 4])))


def _options(rng: random.Random, command: str, names: list[str]) -> list[str]:
    """One or two command-line options with odd or unusual values."""
    name = rng.choice(names + ["nope"])
    common = [["--precision", rng.choice(["f16", "ir"])], ["--shape", f"{name}={_dims_text(rng)}"],
              ["--shape", f"{name}=a,b"], ["--shape", "="]]
    per = {"convert": [["--opset", rng.choice(["17", "21", "99", "1", "0", "-3"])], ["--external-data"],
                       ["--rename", rng.choice([f"{name}=file", "a=b", "=", f"{name}={name}"])],
                       ["--quantized", "qdq"], ["--compressed-weights", "unpack"], ["--jobs", "0"],
                       ["-o", rng.choice(["out/" + "n" * 250 + ".onnx", "out/\u00fc ber.onnx", "out/a/b/m.onnx",
                                          "out/", "out/.hidden.onnx", "out/m.onnx.data"])]],
           "run": [["--seed", rng.choice(["5", "0", "2147483648"])], ["--steps", rng.choice(["0", "-1", "3"])],
                   ["--provider", "cuda"],
                   ["--save", rng.choice(["out/" + "s" * 251 + ".npz", "out/o", "out/d/e/o.npz", "out/in.npz"])]],
           "check": [["--rtol", rng.choice(["0", "1e-300", "inf"])], ["--oracle-budget", rng.choice(["0", "inf"])],
                     ["--opset", rng.choice(["17", "99"])], ["--provider", "cuda"]]}
    pool = common + per["convert" if command.startswith("convert") else command]
    return [x for _ in range(rng.choice([1, 2])) for x in rng.choice(pool)]


def case(n: int) -> Case:
    """Case ``n``: everything derived from ``n``."""
    rng = random.Random(f"ir2onnx-fuzz-{n}")
    base = CORPUS[n % len(CORPUS)]
    xml_path = SAMPLES / (base + ".xml")
    xml = xml_path.read_bytes()
    bin_path = xml_path.with_suffix(".bin")
    bin_ = bin_path.read_bytes() if bin_path.exists() else None
    kinds = list(IR_MUTATIONS) + ["input_file", "example_inputs", "two_mutations"]
    kind = kinds[(n // len(CORPUS) + n) % len(kinds)]
    files: dict[str, bytes] = {}
    command = rng.choices(["convert", "convert_no_verify", "run", "check"], [50, 10, 20, 20])[0]
    if kind in ("input_file", "example_inputs"):
        names = _input_names(xml) or ["x"]
        name = rng.choice(names)
        fname, data, detail = input_file(rng, name)
        files["in/m.xml"] = xml
        if bin_ is not None:
            files["in/m.bin"] = bin_
        command = rng.choice(["run", "check"])
        if kind == "example_inputs":
            files["in/m.inputs.npz"] = data if fname.endswith(".npz") else _npz({name: np.zeros(2)})
            extra = []
            detail = "example inputs: " + detail
        else:
            files[f"in/{fname}"] = data
            extra = ["--input", f"{name}=in/{fname}"]
    else:
        m = Mutant(rng, xml, bin_)
        steps = [rng.choice(list(IR_MUTATIONS)) for _ in range(2)] if kind == "two_mutations" else [kind]
        detail = "; ".join(IR_MUTATIONS[k](m) for k in steps)
        files["in/m.xml"] = m.xml_bytes()
        if m.bin is not None:
            files["in/m.bin"] = m.bin
        extra = []
    if rng.random() < 0.3:
        extra += _options(rng, command, _input_names(xml) or ["x"])
    argv = {"convert": ["convert", "in/m.xml", "-o", "out/m.onnx"],
            "convert_no_verify": ["convert", "in/m.xml", "-o", "out/m.onnx", "--no-verify"],
            "run": ["run", "in/m.xml", "--save", "out/o.npz"],
            "check": ["check", "in/m.xml", "--no-openvino", "--quiet", "--report", "out/r.json"]}[command]
    return Case(n, base, kind, detail, files, argv + extra)


# -- running a case ----------------------------------------------------------------------------
@dataclass
class Verdict:
    case: Case
    code: int | None  # None: killed at the time limit
    stdout: str
    stderr: str
    seconds: float
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        tail = " | ".join(self.stderr.strip().splitlines()[-3:])[:600]
        return f"{self.case}\n  exit {self.code} in {self.seconds:.1f} s: {'; '.join(self.problems)}\n  stderr: {tail}"


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def prepare(c: Case, folder: Path) -> None:
    if folder.exists():
        shutil.rmtree(folder)
    for sub in ("in", "out", "tmp"):
        (folder / sub).mkdir(parents=True)
    for name, data in c.files.items():
        (folder / name).write_bytes(data)


def judge(c: Case, folder: Path, code, stdout: str, stderr: str, seconds: float) -> Verdict:
    problems = []
    if code is None:
        problems.append(f"hang (killed after {TIME_LIMIT:.0f} s)")
    elif code < 0:
        problems.append(f"killed by signal {signal.Signals(-code).name}")
    elif code not in ((0, 1, 2) if c.argv[0] == "check" else (0, 2)):
        problems.append(f"exit {code}")
    if "Traceback" in stderr or "internal error" in stderr:
        problems.append("traceback or internal error")
    if code == 2:  # one error line (after the warnings of a step that went through, if any)
        lines = [line for line in stderr.strip().splitlines() if not line.startswith("ir2onnx: warning: ")]
        if len(lines) != 1 or not lines[0].startswith("ir2onnx: error: "):
            problems.append(f"{len(lines)} stderr line(s) on failure besides warnings")
    out = _listing(folder / "out")
    if code not in (0, 1) and out:
        problems.append(f"left in the output folder: {out}")
    if code in (0, 1) and any(".ir2onnx-tmp" in p for p in out):
        problems.append(f"a temporary left: {out}")
    left = [p for p in _listing(folder / "tmp") if p != ".ses"] + [  # (.ses: onnxruntime's own)
        p for p in _listing(folder / "in") if ".ir2onnx-tmp" in p]
    if left:
        problems.append(f"temporary files left: {left[:5]}")
    return Verdict(c, code, stdout, stderr, seconds, problems)


def _limits(extra: int) -> None:
    """In the child: at most ``extra`` more bytes of address space than now, no core file."""
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + extra, vm + extra))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _subprocess_limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT + 2 * 2**30,) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _env(folder: Path) -> dict:
    env = dict(os.environ, TMPDIR=str(folder / "tmp"), PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    env.pop("IR2ONNX_DEBUG", None)
    return env


def run_subprocess(c: Case, folder: Path) -> Verdict:
    """Case ``c`` in a fresh ``python -m ir2onnx`` (RLIMIT_AS via preexec_fn, a time limit)."""
    prepare(c, folder)
    start = time.monotonic()
    p = subprocess.Popen([sys.executable, "-m", "ir2onnx", *c.argv], cwd=folder, env=_env(folder),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_subprocess_limits,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=TIME_LIMIT)
        code = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        code = None
    return judge(c, folder, code, out.decode(errors="replace"), err.decode(errors="replace"),
                 time.monotonic() - start)


class ForkRunner:
    """A server process that imports ir2onnx once and forks a child per case (each child runs
    ``ir2onnx.cli.main`` as ``python -m ir2onnx`` would, under RLIMIT_AS and a time limit)."""

    def __init__(self):
        self.p = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
                                  env=dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1"))
        ready = self.p.stdout.readline()
        assert ready.strip() == "ready", ready

    def run(self, c: Case, folder: Path) -> Verdict:
        prepare(c, folder)
        self.p.stdin.write(json.dumps({"argv": c.argv, "dir": str(folder)}) + "\n")
        self.p.stdin.flush()
        reply = json.loads(self.p.stdout.readline())
        out = (folder / "stdout.txt").read_text(errors="replace")
        err = (folder / "stderr.txt").read_text(errors="replace")
        (folder / "stdout.txt").unlink()
        (folder / "stderr.txt").unlink()
        return judge(c, folder, reply["code"], out, err, reply["seconds"])

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait(30)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _serve() -> None:
    """The fork server: one JSON request a line on stdin, one reply a line on stdout."""
    import tempfile

    import onnx  # noqa: F401  (imported once, before forking)
    import onnxruntime  # noqa: F401

    from ir2onnx.cli import main as cli
    from ir2onnx.harness import check  # noqa: F401

    cli.build_parser()  # imports what the subcommands register
    reply = sys.stdout
    print("ready", file=reply, flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        folder = Path(req["dir"])
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:  # the case
            try:
                os.setsid()
                os.chdir(folder)
                os.environ["TMPDIR"] = str(folder / "tmp")
                tempfile.tempdir = str(folder / "tmp")
                fd_out = os.open(folder / "stdout.txt", os.O_WRONLY | os.O_CREAT, 0o644)
                fd_err = os.open(folder / "stderr.txt", os.O_WRONLY | os.O_CREAT, 0o644)
                os.dup2(fd_out, 1)
                os.dup2(fd_err, 2)
                sys.stdin = open(os.devnull)
                sys.stdout = open(1, "w", closefd=False)
                sys.stderr = open(2, "w", closefd=False)
                _limits(MEMORY_LIMIT)
                sys.argv = ["ir2onnx", *req["argv"]]
                try:
                    code = cli.main(req["argv"])
                except SystemExit as e:  # argparse
                    code = e.code if isinstance(e.code, int) else 1
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code or 0)
            except BaseException:
                import traceback

                traceback.print_exc()
                sys.stderr.flush()
                os._exit(1)
        code = None
        while time.monotonic() - start < TIME_LIMIT:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                break
            time.sleep(0.005)
        if code is None:
            with_group = True
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                with_group = False
            if not with_group:
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        print(json.dumps({"code": code, "seconds": time.monotonic() - start}), file=reply, flush=True)


def run_cases(ids, folder: Path, runner=None) -> list[Verdict]:
    """Run the cases ``ids`` one after the other in ``folder`` (a subfolder per case, removed when
    the case passes)."""
    verdicts = []
    own = runner is None and os.environ.get("FUZZ_RUNNER") != "subprocess"
    if own:
        runner = ForkRunner()
    try:
        for n in ids:
            c = case(n)
            sub = folder / f"case{n}"
            v = runner.run(c, sub) if runner is not None else run_subprocess(c, sub)
            verdicts.append(v)
            if v.ok:
                shutil.rmtree(sub, ignore_errors=True)
    finally:
        if own:
            runner.close()
    return verdicts


def counts(verdicts: list[Verdict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in verdicts:
        key = "hang" if v.code is None else f"exit {v.code}"
        out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


def _ids(text: str) -> list[int]:
    ids = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        ids += list(range(int(lo), int(hi) + 1)) if hi else [int(lo)]
    return ids


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        _serve()
        sys.exit(0)
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description="run fuzz cases (tests/test_fuzz.py)")
    ap.add_argument("ids", help="case numbers: 7, 0-99, 1,5,9")
    ap.add_argument("--dir", help="where the cases' files go (kept for failures)")
    ap.add_argument("--summary", action="store_true", help="only the counts and the failures")
    a = ap.parse_args()
    where = Path(a.dir or tempfile.mkdtemp(prefix="ir2onnx-fuzz-"))
    results = run_cases(_ids(a.ids), where)
    for v in results:
        if not a.summary or not v.ok:
            print(v if not v.ok else f"{v.case}\n  exit {v.code} in {v.seconds:.1f} s: ok")
    print(json.dumps(counts(results)), f"{sum(not v.ok for v in results)} failure(s); files in {where}")
