"""Operations on a lowered graph's node list, after every layer is lowered: nodes nothing reads
dropped (:func:`prune`), the Identity before a graph output folded into its producer
(:func:`without_output_identities`), a tensor's readers moved to another (:func:`rerouted`), and
what a node reads from the scopes around it (:func:`captured`: the names its sub-graphs use)."""
from __future__ import annotations

from onnx import helper

from ..errors import Ir2OnnxError


def rerouted(nodes: list, outputs: list, reroutes: list, sources: set) -> list:
    """The nodes with every read of ``old`` reading ``new`` instead (``reroutes``: (old, new)
    pairs; a lowering that replaced a tensor made earlier: GroupQueryAttention's caches), a graph
    output named ``old`` written by an Identity of ``new``, in a topological order again. Raises
    Ir2OnnxError when the readers of ``old`` come before ``new`` can be made (a cycle)."""
    renamed = dict(reroutes)
    out_names = {o.name for o in outputs}
    kept = list(nodes)
    for node in kept:
        node.input[:] = [renamed.get(n, n) for n in node.input]
        for i, name in enumerate(node.output):  # the replaced producer's output: read by nobody
            if name in renamed:
                node.output[i] = name + "/unread"
    for old, new in reroutes:
        if old in out_names:
            kept.append(helper.make_node("Identity", [new], [old], name=f"{old}/rerouted"))
    produced = {o for n in kept for o in n.output}
    needs = {id(n): (set(n.input) | captured(n)) & produced for n in kept}
    made, order, waiting = set(sources) | {""}, [], kept
    while waiting:
        ready = [n for n in waiting if needs[id(n)] <= made]
        if not ready:
            raise Ir2OnnxError(f"internal: rerouting {', '.join(o for o, _ in reroutes)} made a cycle")
        ids = {id(n) for n in ready}
        waiting = [n for n in waiting if id(n) not in ids]
        for n in ready:
            made.update(n.output)
        order.extend(ready)
    return order


def prune(nodes: list, outputs: list, tensors: list) -> tuple[list, list]:
    """The nodes that some graph output depends on, and the initializers they read: a lowering
    that found a cheaper form leaves the first form unread (grouped attention's repeated key and
    value heads, :mod:`ir2onnx.ops._attention_groups`). Names that a sub-graph reads from the outer
    scope count as read by the node that holds it."""
    needed = {o.name for o in outputs}
    kept = []
    for node in reversed(nodes):  # topological order: a node's readers come after it
        if any(o in needed for o in node.output):
            kept.append(node)
            needed.update(node.input)
            needed.update(captured(node))
    kept.reverse()
    aliased = {t.alias for t in tensors if t.name in needed and t.alias}
    return kept, [t for t in tensors if t.name in needed or t.name in aliased]


def without_output_identities(nodes: list, outputs: list, sources: set) -> list:
    """The nodes with each ``Identity(x) -> output`` (of ``outputs``: the variables' ``.new``)
    dropped, ``x``'s producer writing the output's name itself (and every reader of ``x`` reading
    it): onnxruntime copies the tensor for such an Identity, the whole KV cache at every decode
    step. Kept where ``x`` is in ``sources`` (graph inputs, initializers, graph outputs) or
    already renamed for another output."""
    names = {o.name for o in outputs}
    produced = {o for n in nodes for o in n.output}
    renamed: dict[str, str] = {}
    dropped = set()
    for node in nodes:
        if node.op_type == "Identity" and node.output[0] in names:
            x = node.input[0]
            if x in produced and x not in sources and x not in names and x not in renamed:
                renamed[x] = node.output[0]
                dropped.add(id(node))
    if not renamed:
        return nodes
    kept = [n for n in nodes if id(n) not in dropped]
    for node in kept:
        rename_inputs(node, renamed)
    return kept


def rename_inputs(node, renamed: dict) -> None:
    for i, name in enumerate(node.input):
        if name in renamed:
            node.input[i] = renamed[name]
    for i, name in enumerate(node.output):
        if name in renamed:
            node.output[i] = renamed[name]
    for attr in node.attribute:
        for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
            for inner in sub.node:
                rename_inputs(inner, renamed)


def captured(node) -> set:
    """Every name read inside ``node``'s sub-graphs (outer-scope names among them)."""
    names: set = set()
    for attr in node.attribute:
        for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
            for inner in sub.node:
                names.update(inner.input)
                names.update(captured(inner))
    return names
