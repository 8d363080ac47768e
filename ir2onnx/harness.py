"""The interop harness: ``ir2onnx check`` and ``ir2onnx selftest`` (see its issue)."""
from __future__ import annotations


def add_commands(sub) -> None:
    """Register the harness's subcommands (none yet)."""
