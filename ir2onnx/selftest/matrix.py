"""The conformance matrix: selftest case results folded into op x backend cells, with the date
and the versions of the toolchain they were measured with."""
from __future__ import annotations

import datetime
import platform

import numpy as np
import onnx
import onnxruntime

from .. import ops  # noqa: F401  (the op modules fill the lowering table)
from ..lowering.registry import supported
from ..runtime.sessions import available_providers
from ..version import __version__
from .catalog import all_cases

BAD = ("fail", "error")
NOT_RUN = ("unsupported", "no lowering", "no oracle")


def versions() -> dict[str, str]:
    """The toolchain the matrix was measured with."""
    out = {"date": datetime.date.today().isoformat(), "ir2onnx": __version__, "onnx": onnx.__version__,
           "onnxruntime": onnxruntime.__version__, "numpy": np.__version__,
           "python": platform.python_version(), "platform": f"{platform.system()} {platform.machine()}",
           "providers": ", ".join(available_providers())}
    try:
        import openvino

        out["openvino"] = openvino.__version__.split("-")[0]
    except ImportError:
        out["openvino"] = "not installed"
    return out


def _cell(values: list[str]) -> str:
    """One matrix cell from the cases of a row in one column: ``pass p/n``, ``FAIL f/n``, plus
    how many were unsupported (the converter refused), deviate (a known OpenVINO deviation) or
    could not run (no lowering / no oracle)."""
    counted = [v for v in values if v not in ("n/a", "unavailable")]
    if not counted:
        return "unavailable" if "unavailable" in values else "n/a"
    bad = sum(v in BAD for v in counted)
    passed = sum(v == "pass" for v in counted)
    if passed == 0 and not bad and len(set(counted)) == 1:
        return counted[0]
    head = f"FAIL {bad}/{len(counted)}" if bad else f"pass {passed}/{len(counted)}"
    extra = [f"{counted.count(k)} {k}" for k in ("deviates", "refused") + NOT_RUN if k in counted]
    return head + (f" ({', '.join(extra)})" if extra else "")


def _opsets(results: list) -> str:
    """The ONNX opsets a row's cases converted at: what its tested paths need (``17, 18``)."""
    found = sorted({r.opset for r in results if r.opset is not None})
    return ", ".join(map(str, found)) or "-"


def matrix(columns: list[str], results: list) -> list[tuple[str, int, list[str]]]:
    """Rows ``(op, number of cases, cells)``, the last cell the ONNX opsets the cases converted at;
    registered lowerings without a case say ``no case``."""
    rows: dict[str, list] = {}  # of runner.CaseResult
    for r in results:
        rows.setdefault(r.case.row, []).append(r)
    out = [(op, len(rs), [_cell([r.cells[c] for r in rs]) for c in columns] + [_opsets(rs)])
           for op, rs in rows.items()]
    covered = {c.row for c in all_cases()}
    out += [(f"{t}-{v}", 0, ["no case"] * len(columns) + ["-"]) for t, v in supported() if f"{t}-{v}" not in covered]
    return sorted(out)


def format_matrix(columns: list[str], results: list, unavailable: dict[str, str] | None = None) -> str:
    """The Markdown matrix (with its date and versions), a line per failing case, and why each
    unavailable column is (``unavailable``: column -> reason)."""
    v = versions()
    lines = [f"Conformance matrix, {v['date']}: ir2onnx {v['ir2onnx']}, onnx {v['onnx']}, onnxruntime "
             f"{v['onnxruntime']} (providers: {v['providers']}), openvino {v['openvino']}, numpy "
             f"{v['numpy']}, Python {v['python']}, {v['platform']}.", "",
             "| op | cases | " + " | ".join(columns) + " | ONNX opset |", "|---|---|" + "---|" * (len(columns) + 1)]
    lines += [f"| {op} | {n} | " + " | ".join(cells) + " |" for op, n, cells in matrix(columns, results)]
    failed = [r for r in results if r.failed]
    notable = ("unsupported", "deviates", "refused")
    other = [r for r in results if not r.failed and any(x in notable for x in r.cells.values())]
    missing = [r for r in results if not r.failed and any(x.startswith("no ") for x in r.cells.values())]
    if failed or other or missing:
        lines.append("")
    for r in failed + other:
        head = "FAIL" if r.failed else "/".join(sorted({x for x in r.cells.values() if x in notable}))
        lines.append(f"- {head} {r.case.name}: " + "; ".join(r.notes or ["(no detail)"]))
    groups: dict[str, list[str]] = {}
    for r in missing:
        groups.setdefault("; ".join(r.notes), []).append(r.case.name)
    for why, names in groups.items():
        lines.append(f"- not run ({why}): {', '.join(names)}")
    for col in columns:
        if any(r.cells.get(col) == "unavailable" for r in results):
            lines.append(f"- {col} unavailable: {(unavailable or {}).get(col, 'not on this machine')}")
    return "\n".join(lines)


START, END = "<!-- matrix:start -->", "<!-- matrix:end -->"


def report_text(old: str | None, text: str) -> str:
    """What ``selftest --report`` writes: ``text`` alone, or, where the file already holds the
    matrix markers (docs/conformance.md), ``old`` with the part between them replaced."""
    if old is None or START not in old or END not in old:
        return text + "\n"
    head, _, rest = old.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{text}\n{END}{tail}"
