"""The package's layout explains itself: no import circles, module names a user of OpenVINO's opset
would guess, and one-way layers (see CONTRIBUTING.md).

Imports are read with ``ast`` from every module of ir2onnx/, top-level and inside functions alike
(a function-level import closes a circle as surely as a top-level one; it only hides it), with
relative imports resolved. ``import a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first: those
implicit parent imports are not counted, or every module would sit in one circle with the public
facade ir2onnx/__init__.py.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ir2onnx"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def read_imports(package: Path) -> tuple[dict[str, Path], dict[str, dict[str, int]], list[str]]:
    """``(modules, edges, unresolved)``: every module of ``package`` and its file; for each, the
    modules of the package it imports, with the line of the first such import; and the imports
    that name a module of the package that does not exist."""
    root = package.parent
    modules = {module_name(p, root): p for p in sorted(package.rglob("*.py"))}
    top = package.name
    edges: dict[str, dict[str, int]] = {}
    unresolved = []
    for name, path in modules.items():
        base = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                pairs = [(a.name, a.name) for a in node.names]  # (the module named, what is imported)
            elif isinstance(node, ast.ImportFrom):
                origin = node.module or ""
                if node.level:
                    parts = base.split(".")
                    origin = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
                # `from pkg import sub` imports the module pkg.sub; `from mod import name`, mod itself
                pairs = [(origin, f"{origin}.{a.name}" if f"{origin}.{a.name}" in modules else origin)
                         for a in node.names]
            else:
                continue
            for origin, target in pairs:
                if origin != top and not origin.startswith(top + "."):
                    continue
                if origin not in modules and not (root / origin.replace(".", "/")).is_dir():
                    unresolved.append(f"{path.relative_to(root)}:{node.lineno}: {origin}")
                elif target in modules and target != name:
                    found.setdefault(target, node.lineno)
        edges[name] = found
    return modules, edges, unresolved


def find_circle(edges: dict[str, dict[str, int]]) -> list[str] | None:
    """One import circle as a list of modules (the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(edges.get(module, {})):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                circle = visit(target)
                if circle:
                    return circle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(edges):
        if module not in state:
            circle = visit(module)
            if circle:
                return circle
    return None


def describe(circle: list[str], modules: dict[str, Path], edges) -> str:
    steps = [f"{a} -> {b} ({modules[a].relative_to(ROOT)}:{edges[a][b]})" for a, b in zip(circle, circle[1:])]
    return "import circle: " + " -> ".join(circle) + "\n  " + "\n  ".join(steps)


MODULES, EDGES, UNRESOLVED = read_imports(PACKAGE)


def imports_of(prefix: str) -> dict[str, set[str]]:
    """Modules named ``prefix`` or under it -> the ir2onnx modules they import."""
    return {m: set(t) for m, t in EDGES.items() if m == prefix or m.startswith(prefix + ".")}


def external_imports(module: str) -> set[str]:
    """Top-level names of the packages outside ir2onnx that ``module`` imports."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out - {"ir2onnx"}


# -- import circles ---------------------------------------------------------------------------
def test_no_import_circle_in_the_package():
    circle = find_circle(EDGES)
    assert circle is None, describe(circle, MODULES, EDGES)


def test_every_import_of_the_package_names_a_module_that_exists():
    assert not UNRESOLVED, "imports of modules that do not exist: " + ", ".join(UNRESOLVED)


def test_the_circle_finder_sees_a_circle_behind_a_function_level_import(tmp_path):
    """The check itself can fail: a circle closed by an import inside a function is found."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from .. import c\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    modules, edges, unresolved = read_imports(pkg)
    assert not unresolved
    assert find_circle(edges) == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]
    (pkg / "c.py").write_text("import numpy\n")
    assert find_circle(read_imports(pkg)[1]) is None


# -- names ------------------------------------------------------------------------------------
def test_module_names_say_what_they_hold():
    bad = [str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*") if p.suffix == ".py" or p.is_dir()
           if p.name != "__pycache__" and re.search(r"\d$|^(misc|util)", p.stem)]
    assert not bad, f"modules named with a trailing digit or misc/util (name them for their op family): {bad}"


def test_every_package_is_in_pyproject():
    """setuptools installs the packages pyproject lists: a new folder of modules must be listed."""
    listed = set(re.findall(r'"(ir2onnx[\w.]*)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8")))
    folders = {module_name(p.parent / "__init__.py", ROOT) for p in PACKAGE.rglob("*.py")}
    assert folders <= listed, f"packages missing from [tool.setuptools] packages: {sorted(folders - listed)}"


# -- one-way layers ---------------------------------------------------------------------------
def test_the_reader_knows_nothing_of_what_comes_after_it():
    allowed = ("ir2onnx.ir", "ir2onnx.errors")
    bad = {m: sorted(t for t in ts if not t.startswith(allowed)) for m, ts in imports_of("ir2onnx.ir").items()}
    assert not {m: t for m, t in bad.items() if t}, bad


def test_oracles_know_nothing_of_onnx_or_the_lowerings():
    for module, targets in imports_of("ir2onnx.oracles").items():
        outside = sorted(t for t in targets if not t.startswith(("ir2onnx.oracles", "ir2onnx.ir", "ir2onnx.errors")))
        assert not outside, f"{module} imports {outside}"
        assert not external_imports(module) & {"onnx", "onnxruntime", "openvino"}, module


def test_only_the_converter_fills_the_lowering_table():
    """lowering/registry.py holds the table and @lowers only; of lowering/, only convert.py imports
    the op modules (the others are the pieces the op modules are built from)."""
    for module, targets in imports_of("ir2onnx.lowering").items():
        ops = sorted(t for t in targets if t == "ir2onnx.ops" or t.startswith("ir2onnx.ops."))
        assert not ops or module == "ir2onnx.lowering.convert", f"{module} imports {ops}"
    assert not imports_of("ir2onnx.lowering.registry")["ir2onnx.lowering.registry"]
    assert not imports_of("ir2onnx.oracles.registry")["ir2onnx.oracles.registry"]


def _family_modules(package: str, registry) -> set[str]:
    return {fn.__module__ for fn in registry.values() if fn.__module__.startswith(package + ".")}


def test_no_op_family_imports_another_family():
    """What two families share lives in a module that no family owns (ops/_common/inputs.py,
    oracles/elements.py ...); a family's own helpers (ops/_depth_to_space_move.py) sit beside it."""
    from ir2onnx.lowering.registry import LOWERINGS
    from ir2onnx.oracles.registry import ORACLES
    import ir2onnx.ops  # noqa: F401
    import ir2onnx.oracles  # noqa: F401

    for package, registry in (("ir2onnx.ops", LOWERINGS), ("ir2onnx.oracles", ORACLES)):
        families = _family_modules(package, registry)
        for module in [m for m in imports_of(package) if m != package]:
            crossing = sorted(t for t in EDGES[module] if t in families and t != module)
            leaf = module.rpartition(".")[2].lstrip("_")
            helper_of = {f for f in families if leaf.startswith(f.rpartition(".")[2] + "_")}
            assert not crossing or set(crossing) <= helper_of, f"{module} imports the families {crossing}"


@pytest.mark.parametrize("package", ["ir2onnx.ops", "ir2onnx.oracles", "ir2onnx.selftest"])
def test_no_module_is_dead(package):
    """Every module of ops/, oracles/ and selftest/ is reached from its package's explicit list
    (ops/__init__.py, oracles/__init__.py, selftest/catalog.py) or imported from outside the
    package (the oracle interpreter): a family module left out of the list would never run."""
    inside = {m for m in MODULES if m.startswith(package + ".")}
    todo = [package] + [t for m, ts in EDGES.items() if m not in inside and m != package for t in ts if t in inside]
    reachable = set()
    while todo:
        m = todo.pop()
        if m not in reachable:
            reachable.add(m)
            todo += [t for t in EDGES.get(m, {}) if t in inside]
    reachable |= {m.rpartition(".")[0] for m in reachable}  # a sub-package runs when one of its modules does
    assert inside <= reachable, f"modules nothing imports: {sorted(inside - reachable)}"


# -- the house by role (CONTRIBUTING.md) --------------------------------------------------------
def test_the_top_of_the_package_holds_at_most_ten_modules():
    """Everything else lives in the sub-package of its role (ir/, lowering/, ops/, oracles/,
    runtime/, llm/, harness/, cli/, selftest/, testing/)."""
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 10, f"{len(top)} modules beside the sub-packages: {top}"


# The layers, lowest first: a module imports its own layer and those below it. CONTRIBUTING.md
# draws the same picture and names the one arrow back up.
LAYERS = [
    ("ir2onnx.errors", "ir2onnx.version"),
    ("ir2onnx.ir",),
    ("ir2onnx.oracles",),
    ("ir2onnx.lowering", "ir2onnx.ops"),
    ("ir2onnx.runtime",),
    ("ir2onnx.writer", "ir2onnx.verify", "ir2onnx.rename"),
    ("ir2onnx.llm",),
    ("ir2onnx.api",),
    ("ir2onnx.inference", "ir2onnx.harness"),
    ("ir2onnx.testing",),
    ("ir2onnx.selftest", "ir2onnx.support"),
    ("ir2onnx.cli", "ir2onnx.__main__", "ir2onnx"),
]
# the converter asks onnxruntime which opsets it loads (runtime/sessions.py: ort_max_opset), so
# that it never writes a model the installed onnxruntime cannot load
UPWARD = {("ir2onnx.lowering.convert", "ir2onnx.runtime.sessions")}


def layer_of(module: str) -> int:
    found = [(len(name), i) for i, names in enumerate(LAYERS) for name in names
             if module == name or module.startswith(name + ".")]
    assert found, f"{module} is in no layer of tests/test_layout.py's LAYERS"
    return max(found)[1]


def test_layers_import_downward_only():
    up = sorted(f"{m} -> {t} ({MODULES[m].relative_to(ROOT)}:{line})" for m, ts in EDGES.items()
                for t, line in ts.items() if layer_of(t) > layer_of(m) and (m, t) not in UPWARD)
    assert not up, "imports from a lower layer up to a higher one: " + "; ".join(up)
    assert all(layer_of(t) > layer_of(m) and t in EDGES[m] for m, t in UPWARD), "UPWARD lists an arrow that is gone"


def _callers_of_precision_apply() -> set[str]:
    callers = set()
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        as_module, as_function = set(), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                origin = (node.module or "").rpartition(".")[2]
                for a in node.names:
                    if a.name == "precision":
                        as_module.add(a.asname or a.name)
                    elif origin == "precision" and a.name == "apply":
                        as_function.add(a.asname or a.name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                if (isinstance(f, ast.Name) and f.id in as_function) or (
                        isinstance(f, ast.Attribute) and f.attr == "apply" and isinstance(f.value, ast.Name)
                        and f.value.id in as_module):
                    callers.add(name)
    return callers


def test_the_precision_is_applied_in_one_place():
    """The graph records its precision (Graph.precision); every other module reads that."""
    assert _callers_of_precision_apply() == {"ir2onnx.lowering.convert"}


def test_the_oracle_interpreter_is_reached_through_its_package():
    """Names come from ir/names.py; outside oracles/, the interpreter is ir2onnx.oracles.evaluate."""
    outside = sorted(m for m, ts in EDGES.items() if "ir2onnx.oracles.interpreter" in ts
                     and not m.startswith("ir2onnx.oracles"))
    assert not outside, f"modules outside oracles/ that import oracles/interpreter.py: {outside}"


# optional dependencies: imported where they are used, so that ir2onnx runs without them
OPTIONAL = {"openvino", "matplotlib", "onnxruntime_genai", "optimum", "transformers", "torch", "selenium"}


def test_imports_sit_at_the_top_of_their_module():
    """A function-level import hides a layer's dependencies: only optional packages are imported
    inside functions (CONTRIBUTING.md)."""
    inside = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    tops = {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom):
                    tops = {"ir2onnx"} if node.level else {(node.module or "").split(".")[0]}
                else:
                    continue
                if tops - OPTIONAL:
                    inside.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not inside, "imports inside functions (move them to the top): " + ", ".join(sorted(set(inside)))


if __name__ == "__main__":  # python tests/test_layout.py: print the import graph's circles, if any
    found = find_circle(EDGES)
    print(describe(found, MODULES, EDGES) if found else "no import circle")
    sys.exit(1 if found else 0)
