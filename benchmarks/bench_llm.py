"""Per-token decode latency of an LLM IR on every runtime, in one run, same threads.

    python benchmarks/bench_llm.py IR_DIR [--optimum-onnx MODEL.onnx] [--threads 2]
        [--prompt 32 480 2000] [--tokens 32] [--rounds 6] [--block 2] [--accuracy-level 4|0] [--spinning]

IR_DIR is an optimum-intel export (openvino_model.xml; ``samples/make_llm.py --bench OUT``
makes a ~110M-parameter Llama-style one). Runners, each decoding ``--tokens`` greedy tokens after
a prompt of the same ids, for each ``--prompt`` length (default 32, 480 and 2,000 tokens: the
cost of attention grows with the context; the model's positions must reach prompt + tokens, 2048
for ``--bench``'s model):

- ``ort``: onnxruntime on ir2onnx's conversion (the decode loop of ``ir2onnx run --steps``, the
  cache kept in onnxruntime's own tensors from step to step, as genai and optimum's io binding
  keep it; so is the ``optimum_onnx`` runner);
- ``openvino_f32``: OpenVINO on the IR at the check's exact settings (INFERENCE_PRECISION_HINT
  f32, KV_CACHE_PRECISION f32, no dynamic quantization); ``openvino``: its defaults;
- ``ort_gqa``: onnxruntime on the ``convert --genai`` folder's model.onnx (GroupQueryAttention,
  the cache concatenated from step to step by a plain session);
- ``genai``: onnxruntime-genai on the ``convert --genai`` folder (when installed; GroupQueryAttention
  writing the cache in place);
- ``optimum_onnx``: onnxruntime on optimum's own ONNX export of the same model (when given);
- ``kv_copy``: onnxruntime on a model of the ``ort`` model's cache appends alone (each cache
  input concatenated with new keys or values of the step's length, the result the next step's
  input): the least time per step that any model whose caches go in as ``past`` and come out as
  ``present`` spends on its caches, where genai's shared buffer writes in place.

onnxruntime sessions and genai's run with ``session.intra_op.allow_spinning=0`` (``--spinning``: 1,
onnxruntime's default), ``--threads`` intra-op
threads and MatMulNBits at ``--accuracy-level`` (4, onnxruntime's default: int8 activations;
0: f32 activations, OpenVINO's exact settings, much slower; the genai folder is written at it), OpenVINO with INFERENCE_NUM_THREADS, genai with intra_op_num_threads. A round runs each
runner ``--block`` times back to back (one untimed first); a token's time is the median of its
decode steps (the prompt step apart), and ratios are taken per round against ``ort`` and
summarised by their median (``--baseline`` names the runner, default ``ort``), which cancels
most of the drift of a shared machine. File sizes are
ir2onnx's output (model + external data) against the IR's .bin.
"""
from __future__ import annotations

import argparse
import atexit
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ir2onnx.llm import interface as llm
from ir2onnx.runtime import sessions as runtime  # noqa: E402
from ir2onnx.harness.backends import OPENVINO_EXACT  # noqa: E402


ACCURACY_LEVEL = ["4"]  # MatMulNBits' accuracy level for the ort runner (--accuracy-level)
SPINNING = ["0"]  # session.intra_op.allow_spinning of the onnxruntime runners (--spinning)


def ort_session(path, threads: int):
    """An onnxruntime CPU session on ``path`` (a file, or a serialized model's bytes)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", SPINNING[0])
    opts.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", ACCURACY_LEVEL[0])
    opts.log_severity_level = 3
    return ort.InferenceSession(path if isinstance(path, bytes) else str(path), opts,
                                providers=["CPUExecutionProvider"])


def ort_runner(path, threads: int):
    import onnx
    import onnxruntime as ort

    sess = ort_session(path, threads)
    iface = llm.interface(onnx.load(str(path), load_external_data=False))
    types = {i.name: runtime.input_dtype(i.type) for i in sess.get_inputs()}
    outputs = {c.output: c.input for c in iface.caches}
    names = [o.name for o in sess.get_outputs()]

    def generate(ids: np.ndarray, n: int) -> tuple[list[int], list[float]]:
        # the cache stays in onnxruntime's tensors from step to step (OrtValues: no copy to and
        # from numpy), as onnxruntime-genai and optimum's io binding keep it
        cache = {k: ort.OrtValue.ortvalue_from_numpy(v) for k, v in llm.empty_cache(iface, 1, types).items()}
        past, tokens, times = 0, [], []
        for _ in range(n):
            t = time.perf_counter()
            feeds = {k: ort.OrtValue.ortvalue_from_numpy(v) for k, v in llm.token_feeds(iface, ids, past).items()}
            got = dict(zip(names, sess.run_with_ort_values(names, {**feeds, **cache})))
            for name, value in got.items():
                if name in outputs:
                    cache[outputs[name]] = value
            past += ids.shape[1]
            ids = np.argmax(got[iface.logits].numpy()[:, -1], -1)[:, None].astype(ids.dtype)
            times.append(time.perf_counter() - t)
            tokens.append(int(ids[0, 0]))
        return tokens, times

    return generate


def kv_copy_runner(path, threads: int):
    """onnxruntime on the Concats that append to the caches of the model at ``path``, and nothing
    else: a step's new keys and values (zeros, the step's length) go in beside each cache."""
    import onnx
    import onnxruntime as ort
    from onnx import helper

    model = onnx.load(str(path), load_external_data=False)
    iface = llm.interface(model)
    types = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
    nodes, inputs, outputs = [], [], []
    for c in iface.caches:
        for name, seq in ((c.input, "past"), (c.input + "/new", "new")):
            dims = [seq if i == c.sequence_axis else "batch" if i == c.batch_axis else d
                    for i, d in enumerate(c.initial_shape)]
            inputs.append(helper.make_tensor_value_info(name, types[c.input], dims))
        nodes.append(helper.make_node("Concat", [c.input, c.input + "/new"], [c.output], axis=c.sequence_axis))
        outputs.append(helper.make_tensor_value_info(c.output, types[c.input], None))
    graph = helper.make_graph(nodes, "kv_copy", inputs, outputs)
    sess = ort_session(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString(),
                       threads)
    dtypes = {i.name: runtime.input_dtype(i.type) for i in sess.get_inputs()}
    names = [c.output for c in iface.caches]
    inputs_of = {c.output: c.input for c in iface.caches}

    def generate(ids: np.ndarray, n: int) -> tuple[list[int], list[float]]:
        cache = {k: ort.OrtValue.ortvalue_from_numpy(v) for k, v in llm.empty_cache(iface, 1, dtypes).items()}
        length, times = ids.shape[1], []
        for _ in range(n):
            t = time.perf_counter()
            new = {}
            for c in iface.caches:
                shape = [length if i == c.sequence_axis else 1 if i == c.batch_axis else d
                         for i, d in enumerate(c.initial_shape)]
                new[c.input + "/new"] = ort.OrtValue.ortvalue_from_numpy(np.zeros(shape, dtypes[c.input]))
            got = sess.run_with_ort_values(names, {**cache, **new})
            cache = {inputs_of[name]: value for name, value in zip(names, got)}
            length = 1
            times.append(time.perf_counter() - t)
        return [], times

    return generate


def openvino_runner(xml: Path, threads: int, config: dict):
    import openvino as ov

    compiled = ov.Core().compile_model(str(xml), "CPU", {**config, "INFERENCE_NUM_THREADS": threads})
    request = compiled.create_infer_request()
    names = {p.get_any_name() for p in compiled.inputs}
    iface = llm.Interface({n: np.int64 if n != "beam_idx" else np.int32 for n in llm.TOKEN_INPUTS
                           if n in names}, "logits")

    def generate(ids: np.ndarray, n: int) -> tuple[list[int], list[float]]:
        request.reset_state()
        past, tokens, times = 0, [], []
        for _ in range(n):
            t = time.perf_counter()
            request.infer(llm.token_feeds(iface, ids, past))
            logits = request.get_tensor("logits").data
            past += ids.shape[1]
            ids = np.argmax(logits[:, -1], -1)[:, None].astype(np.int64)
            times.append(time.perf_counter() - t)
            tokens.append(int(ids[0, 0]))
        return tokens, times

    return generate


def genai_runner(folder: Path, threads: int):
    import onnxruntime_genai as og

    config_path = folder / "genai_config.json"
    config = json.loads(config_path.read_text())
    # genai passes session_options entries it does not know to AddConfigEntry (0.18: measured, a
    # malformed value fails the session), so its threads spin or not as the onnxruntime runners'
    config["model"]["decoder"]["session_options"].update({
        "intra_op_num_threads": threads, "inter_op_num_threads": 1,
        "session.intra_op.allow_spinning": SPINNING[0]})
    config_path.write_text(json.dumps(config, indent=4))
    model = og.Model(str(folder))

    def generate(ids: np.ndarray, n: int) -> tuple[list[int], list[float]]:
        params = og.GeneratorParams(model)
        params.set_search_options(do_sample=False, max_length=ids.shape[1] + n, min_length=ids.shape[1] + n)
        gen = og.Generator(model, params)
        tokens, times = [], []
        t = time.perf_counter()
        gen.append_tokens(ids.astype(np.int32))
        for _ in range(n):
            gen.generate_next_token()
            tokens.append(int(gen.get_next_tokens()[0]))
            times.append(time.perf_counter() - t)
            t = time.perf_counter()
        return tokens, times

    return generate


def rounds(runners: dict, ids: np.ndarray, count: int, block: int, tokens: int, warm: int = 4):
    """Each runner in turn, ``count`` rounds: an untimed ``warm``-token run (threads and caches
    settle), then ``block`` runs of ``tokens`` tokens. Returns runner -> the per-round medians of
    the per-token times (the prompt step left out), and runner -> its first tokens."""
    per_token: dict = {k: [] for k in runners}
    first: dict = {}
    for _ in range(count):
        for name, generate in runners.items():
            first[name], _ = generate(ids, warm)
            times = [np.median(generate(ids, tokens)[1][1:]) for _ in range(block)]
            per_token[name].append(float(np.median(times)))
    return per_token, first


def sizes(onnx_path: Path, bin_path: Path) -> str:
    total = sum(p.stat().st_size for p in onnx_path.parent.glob(onnx_path.name + "*"))
    return f"{total / 1e6:.1f} MB ({total / bin_path.stat().st_size:.3f}x the .bin's {bin_path.stat().st_size / 1e6:.1f} MB)"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ir_dir", type=Path)
    p.add_argument("--optimum-onnx", type=Path)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--prompt", type=int, nargs="+", default=[32, 480, 2000],
                   help="prompt lengths, each timed in turn (default 32 480 2000)")
    p.add_argument("--tokens", type=int, default=32)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--block", type=int, default=2)
    p.add_argument("--only", nargs="*", help="runners to time (default all)")
    p.add_argument("--baseline", default="ort", help="the runner ratios are taken against (default ort)")
    p.add_argument("--accuracy-level", choices=["0", "4"], default="4",
                   help="MatMulNBits accuracy level of the ort and genai runners: 4, int8 activations, "
                        "onnxruntime's own default (default); 0, f32 activations as OpenVINO's exact settings")
    p.add_argument("--spinning", action="store_true",
                   help="let onnxruntime's threads spin (its default; genai's always do)")
    args = p.parse_args()
    ACCURACY_LEVEL[0] = args.accuracy_level
    SPINNING[0] = "1" if args.spinning else "0"

    from ir2onnx.api import convert_file, load_ir
    from ir2onnx.llm.genai import write_folder

    xml = args.ir_dir / "openvino_model.xml"
    tmp = Path(tempfile.mkdtemp(prefix="bench-llm-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # the converted models: GBs per run
    onnx_path = convert_file(xml, tmp / "model.onnx")
    print(f"ir2onnx file: {sizes(onnx_path, xml.with_suffix('.bin'))}")
    runners = {"ort": ort_runner(onnx_path, args.threads),
               "openvino_f32": openvino_runner(xml, args.threads, OPENVINO_EXACT),
               "openvino": openvino_runner(xml, args.threads, {})}
    folder = write_folder(load_ir(xml), tmp / "genai", accuracy_level=int(args.accuracy_level))
    runners["ort_gqa"] = ort_runner(folder / "model.onnx", args.threads)
    runners["kv_copy"] = kv_copy_runner(onnx_path, args.threads)
    try:
        import onnxruntime_genai  # noqa: F401
    except ImportError:
        print("onnxruntime-genai is not installed: no genai runner")
    else:
        runners["genai"] = genai_runner(folder, args.threads)
    if args.optimum_onnx:
        runners["optimum_onnx"] = ort_runner(args.optimum_onnx, args.threads)
    if args.only:
        runners = {k: v for k, v in runners.items() if k in args.only or k in ("ort", args.baseline)}
    for length in args.prompt:
        ids = np.random.default_rng(0).integers(3, 1000, size=(1, length)).astype(np.int64)
        per_token, first_tokens = rounds(runners, ids, args.rounds, args.block, args.tokens)
        base = np.array(per_token[args.baseline])
        print(f"threads {args.threads}, spinning {SPINNING[0]}, prompt {length}, {args.tokens} tokens, "
              f"{args.rounds} rounds of {args.block}")
        print(f"{'runner':14} {'ms/token':>9} {'vs ' + args.baseline + ' (median of rounds)':>32}  first tokens")
        for name, ts in per_token.items():
            ratio = float(np.median(np.array(ts) / base))
            print(f"{name:14} {1e3 * np.median(ts):9.2f} {ratio:32.3f}  {first_tokens[name]}", flush=True)


if __name__ == "__main__":
    main()
