"""Run ``ir2onnx check`` (default options) on every bundled IR under samples/ and list the result.

Each check runs in its own process, as a user would type it; prints one line per model (exit code,
seconds, the first problem line when it fails) and a summary. Exit 1 when any sample fails.

    python benchmarks/check_samples.py [--root samples] [--timeout 600] [--match SUBSTRING]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent / "samples"))
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per model (default 600)")
    ap.add_argument("--match", default="", help="only models whose path contains this")
    ap.add_argument("args", nargs="*", help="extra arguments for check (after --)")
    args = ap.parse_args()
    models = sorted(p for p in Path(args.root).rglob("*.xml") if args.match in str(p))
    failed = []
    total = time.perf_counter()
    for xml in models:
        start = time.perf_counter()
        try:
            p = subprocess.run([sys.executable, "-m", "ir2onnx", "check", str(xml), *args.args],
                               capture_output=True, text=True, timeout=args.timeout)
            rc, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            rc, out, err = "timeout", "", ""
        seconds = time.perf_counter() - start
        why = ""
        if rc != 0:
            failed.append(str(xml))
            lines = [l.strip() for l in out.splitlines()]
            after = [l for i, l in enumerate(lines) if i and lines[i - 1].startswith("result")]
            errors = [l.strip() for l in err.splitlines() if l.strip() and not l.startswith("check: ")]
            why = (after or errors[-1:] or [""])[0][:200]  # the first problem, or the error line
        print(f"{str(rc):>7} {seconds:7.1f} s  {xml}  {why}", flush=True)
    print(f"{len(models) - len(failed)}/{len(models)} samples pass their own check "
          f"({time.perf_counter() - total:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
