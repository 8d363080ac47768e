"""Follow a model argument through ir2onnx: which modules it enters, how often a call goes from a
lower layer up to a higher one, and how often it comes back to a module it had left.

    python tests/call_path.py samples/decoder/decoder.xml     # run it on ir2onnx.run(MODEL)

A call is followed when one of its arguments is the model: the path given, or a Graph (the IR as
read, or computed at a precision). Modules are ordered by tests/test_layout.py's LAYERS; a
module of an older layout is first renamed to the module it became (OLD_NAMES), so the same
script measures an older checkout (``PYTHONPATH=OLD_CHECKOUT python tests/call_path.py ...``).
"""
from __future__ import annotations

import sys
from pathlib import Path

# the flat modules of the layout before the house moved (stop 27), by the module each became
OLD_NAMES = {
    "_openvino_child": "harness.openvino_child", "backends": "harness.backends", "batch": "cli.batch",
    "cli": "cli.main", "compare": "harness.compare", "convert_summary": "cli.summary",
    "example_inputs": "runtime.example_inputs", "feed_args": "cli.feeds", "genai": "llm.genai",
    "harness": "harness.check", "in_memory": "ir.in_memory", "input_values": "runtime.input_values",
    "int8_rule": "harness.int8_rule", "llm": "llm.interface", "llm_decode": "llm.decode",
    "oracle_budget": "harness.oracle_budget", "paths": "cli.paths", "quantized_models": "testing.quantized_models",
    "report": "harness.report", "runtime": "runtime.sessions", "stateful": "runtime.stateful",
}


def current_name(module: str) -> str:
    head, _, rest = module.partition(".")
    if head == "ir2onnx" and rest in OLD_NAMES:
        return "ir2onnx." + OLD_NAMES[rest]
    return module


def follow(fn, model, *args, **kwargs) -> dict:
    """Call ``fn(model, *args, **kwargs)`` and follow ``model`` through the calls that receive it:
    ``{"modules": [...entered, in order], "upward": [(caller, callee)...], "returns": n}``."""
    from test_layout import layer_of  # tests/ is on sys.path when run by pytest or as a script

    from ir2onnx.ir.graph import Graph

    names = {str(model), str(Path(str(model)))} if isinstance(model, (str, Path)) else set()

    def is_model(value) -> bool:
        if isinstance(value, Graph) or value is model:
            return True
        return isinstance(value, (str, Path)) and str(value) in names

    entered: list[str] = []
    upward: list[tuple[str, str]] = []
    stack: list[str] = []  # the followed calls' modules
    returns = 0
    left: set[str] = set()
    returned: set[str] = set()

    def profile(frame, event, arg):
        nonlocal returns
        module = frame.f_globals.get("__name__", "")
        if event == "call" and module.startswith("ir2onnx"):
            code = frame.f_code
            params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
            if any(is_model(frame.f_locals.get(p)) for p in params):
                module = current_name(module)
                caller = stack[-1] if stack else None
                if caller is not None and caller != module:
                    profile.pairs.append((caller, module))
                    if layer_of(module) > layer_of(caller):
                        upward.append((caller, module))
                    if module in left:
                        returns += 1
                        returned.add(module)
                if module not in entered:
                    entered.append(module)
                stack.append(module)
                frame.f_locals  # noqa: B018  (keeps the frame's locals readable)
                frame.f_trace_lines = False
                profile.frames[id(frame)] = module
        elif event == "return" and id(frame) in profile.frames:
            module = profile.frames.pop(id(frame))
            stack.pop()
            if not stack or stack[-1] != module:
                left.add(module)

    profile.frames, profile.pairs = {}, []
    sys.setprofile(profile)
    try:
        fn(model, *args, **kwargs)
    finally:
        sys.setprofile(None)
    return {"modules": entered, "upward": upward, "returns": returns, "returned": sorted(returned),
            "pairs": sorted(set(profile.pairs))}


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import ir2onnx

    found = follow(ir2onnx.run, sys.argv[1])
    print(f"modules entered: {len(found['modules'])}")
    for m in found["modules"]:
        print("  " + m)
    print(f"calls from a lower layer up to a higher one: {len(found['upward'])}")
    for caller, callee in found["upward"]:
        print(f"  {caller} -> {callee}")
    print(f"returns to a module already left: {found['returns']} (into {len(found['returned'])} modules: "
          f"{', '.join(found['returned'])})")
    print(f"distinct calls from one module to another: {len(found['pairs'])}")
