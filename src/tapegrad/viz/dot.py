"""From a ``Value`` or ``Tensor`` to a plain graph model (nodes with text lines, edges), and from that to DOT.

Edges point the way gradients flow: from the output towards the inputs. A ``Value`` graph has one box per
value (label, data, grad) and one oval per operation (``+``, ``*``, ``tanh``), as micrograd's ``draw_dot``. A
``Tensor`` graph has the output tensor, one oval per backward node (``MulBackward0``, ``AccumulateGrad``), and
one box per leaf tensor (name from ``params``, shape, data, grad), as torchviz's ``make_dot``; with
``show_saved=True`` also what each node saved for backward (dashed, orange).

Large graphs: long runs of repeated structure (a chain of the same ops) are collapsed into one "⋮ N× ..."
node; a graph still larger than ``max_nodes`` is refused with a message saying what to do instead.
"""

from __future__ import annotations

from .._format import short_array, short_number

__all__ = ["GraphModel", "GNode", "build", "to_dot", "GraphTooLarge"]

_SCAN_LIMIT = 200_000     # never walk further than this many graph nodes (a million-op chain must not hang)


class GraphTooLarge(ValueError):
    """The graph has more nodes than can be drawn usefully."""


class GNode:
    """One drawn node: ``kind`` is value | tensor | op | saved | collapsed; ``lines`` the text shown."""

    __slots__ = ("id", "kind", "lines", "sig", "role")

    def __init__(self, id, kind, lines, sig, role=""):  # noqa: A002
        self.id, self.kind, self.lines, self.sig, self.role = id, kind, lines, sig, role

    def __repr__(self):
        return f"GNode({self.kind}: {' | '.join(self.lines)})"


class GraphModel:
    """Nodes (in insertion order) and edges ``(src_id, dst_id, style)`` of a drawn graph."""

    def __init__(self):
        self.nodes = {}
        self.edges = []
        self.collapsed = 0   # how many nodes were folded into "⋮" nodes

    def add(self, node):
        self.nodes[node.id] = node
        return node

    def edge(self, a, b, style=""):
        self.edges.append((a, b, style))

    def __len__(self):
        return len(self.nodes)


# --- formatting ------------------------------------------------------------------------------------------------
def _shape(shape):
    return "(" + ", ".join(map(str, shape)) + ")"


# --- Value graphs -----------------------------------------------------------------------------------------------
def _from_values(roots, model, show_grad):
    seen = set()
    stack = list(roots)
    order = []
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        order.append(v)
        if len(order) > _SCAN_LIMIT:
            raise GraphTooLarge(f"this graph has more than {_SCAN_LIMIT} values; draw a smaller part of it "
                                "(one neuron or one layer's output) or use tapegrad.viz.print_graph(root, "
                                "max_depth=...)")
        stack.extend(reversed(v._kids))     # popped in input order: a left of b in the picture
    root_ids = {id(r) for r in roots}
    for v in order:
        vid = f"v{id(v)}"
        lines = [v.label or ("output" if id(v) in root_ids else ("leaf" if not v._kids else "value")),
                 f"data {short_number(v.data)}"]
        if show_grad:
            lines.append(f"grad {short_number(v.grad)}")
        role = "root" if id(v) in root_ids else ("leaf" if not v._kids else "")
        model.add(GNode(vid, "value", lines, ("value", v._op), role))
        if v._op or v._kids:
            oid = vid + "op"
            model.add(GNode(oid, "op", [v._op or "op"], ("op", v._op)))
            model.edge(vid, oid)
            done = set()
            for k in v._kids:
                if id(k) not in done:
                    done.add(id(k))
                    model.edge(oid, f"v{id(k)}")


# --- Tensor graphs ----------------------------------------------------------------------------------------------
def _tensor_lines(t, name, show_grad):
    lines = [name, f"{_shape(t.shape)} {str(t.dtype).replace('tapegrad.', '')}"]
    lines.append(f"data {short_array(t._array)}")
    if show_grad:
        g = t._grad
        lines.append("grad None" if g is None else f"grad {short_array(g._array)}")
    return lines


def _saved_entries(node):
    from ..autograd.function import saved_entries
    return saved_entries(node)


def _from_tensors(roots, model, show_grad, show_saved, names):
    from ..autograd.function import AccumulateGrad
    for i, t in enumerate(roots):
        tid = f"t{id(t)}"
        name = names.get(id(t)) or ("output" if len(roots) == 1 else f"output {i}")
        model.add(GNode(tid, "tensor", _tensor_lines(t, name, show_grad), ("tensor",), "root"))
        if t.grad_fn is not None:
            model.edge(tid, f"n{id(t.grad_fn)}")
    stack = [t.grad_fn for t in roots if t.grad_fn is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if len(seen) > _SCAN_LIMIT:
            raise GraphTooLarge(f"this graph has more than {_SCAN_LIMIT} nodes; use tapegrad.autograd.graph_stats"
                                "(t) for numbers, or draw a smaller part")
        nid = f"n{id(node)}"
        lines = [node.name()]
        if node.__class__ is AccumulateGrad:
            model.add(GNode(nid, "op", lines, ("op", "AccumulateGrad"), "acc"))
            var = node.variable
            if var is not None:
                vid = f"t{id(var)}"
                if vid not in model.nodes:
                    model.add(GNode(vid, "tensor", _tensor_lines(var, names.get(id(var), "leaf"), show_grad),
                                    ("tensor",), "leaf"))
                model.edge(nid, vid)
            continue
        saved = _saved_entries(node)
        if saved == "freed":
            lines.append("(saved freed)")
        model.add(GNode(nid, "op", lines, ("op", node.name())))
        if show_saved and saved and saved != "freed":
            for j, (what, arr, tensor) in enumerate(saved):
                if tensor is not None and id(tensor) in names:
                    label = f"saved {names[id(tensor)]}"
                else:
                    label = f"saved {what}"
                sid = f"{nid}s{j}"
                model.add(GNode(sid, "saved", [label, f"{_shape(arr.shape)} {arr.nbytes} B"], ("saved",)))
                model.edge(nid, sid, "dashed")
        for nxt, _ in node.next_functions:
            if nxt is not None:
                model.edge(nid, f"n{id(nxt)}")
        stack.extend(n for n, _ in reversed(node.next_functions) if n is not None and id(n) not in seen)


# --- layering and collapsing ------------------------------------------------------------------------------------
def layers(model):
    """Longest-path layer of every node (roots at 0), computed without recursion."""
    indeg = dict.fromkeys(model.nodes, 0)
    out = {k: [] for k in model.nodes}
    for a, b, _ in model.edges:
        out[a].append(b)
        indeg[b] += 1
    layer = dict.fromkeys(model.nodes, 0)
    ready = [k for k, d in indeg.items() if d == 0]
    while ready:
        k = ready.pop()
        lk = layer[k] + 1
        for b in out[k]:
            if layer[b] < lk:
                layer[b] = lk
            indeg[b] -= 1
            if indeg[b] == 0:
                ready.append(b)
    return layer


def collapse(model, min_reps=6, keep=2):
    """Fold long runs of layers that repeat with a short period (a chain of the same ops) into one node each."""
    layer = layers(model)
    depth = max(layer.values(), default=-1) + 1
    by_layer = [[] for _ in range(depth)]
    for k, v in layer.items():
        by_layer[v].append(k)
    sigs = [tuple(sorted(model.nodes[k].sig for k in ks)) for ks in by_layer]
    removed = {}
    i = 0
    while i < depth:
        for p in (1, 2, 3, 4):
            j = i + p
            while j < depth and sigs[j] == sigs[j - p]:
                j += 1
            reps = (j - i) // p
            if reps >= min_reps:
                lo, hi = i + keep * p, i + (reps - keep) * p
                cid = f"c{i}"
                gone = [k for d in range(lo, hi) for k in by_layer[d]]
                ops = [model.nodes[k].lines[0] for d in range(lo, lo + p) for k in by_layer[d]
                       if model.nodes[k].kind == "op"]
                for k in gone:
                    removed[k] = cid
                model.add(GNode(cid, "collapsed", [f"⋮ {(hi - lo) // p}× [{', '.join(ops) or 'values'}]",
                                                   f"{len(gone)} nodes collapsed"], ("collapsed",)))
                i = j
                break
        else:
            i += 1
    if not removed:
        return model
    new = GraphModel()
    for k, n in model.nodes.items():
        if k not in removed:
            new.add(n)
    seen = set()
    for a, b, s in model.edges:
        a, b = removed.get(a, a), removed.get(b, b)
        if a == b or (a, b) in seen:
            continue
        seen.add((a, b))
        new.edge(a, b, s)
    new.collapsed = len(removed)
    return new


def build(root, show_grad=True, show_saved=False, params=None, max_nodes=1000):
    """The graph model of ``root`` (a Value, a Tensor, or a list of them), collapsed and size-checked."""
    roots = list(root) if isinstance(root, (list, tuple)) else [root]
    if not roots:
        raise ValueError("tapegrad.viz.draw: nothing to draw (got an empty list)")
    model = GraphModel()
    from ..scalar.value import Value
    if all(isinstance(r, Value) for r in roots):
        if params:
            for name, v in params.items():
                if isinstance(v, Value) and not v.label:
                    v.label = name
        _from_values(roots, model, show_grad)
    else:
        from ..tensor import Tensor
        bad = [type(r).__name__ for r in roots if not isinstance(r, Tensor)]
        if bad:
            raise TypeError(f"tapegrad.viz.draw: expected a Tensor or a tapegrad.scalar.Value (or a list of "
                            f"them), got {', '.join(bad)}")
        names = {}
        for name, t in (dict(params) if params else {}).items():
            names[id(t)] = name
        _from_tensors(roots, model, show_grad, show_saved, names)
    if len(model) > 60:
        model = collapse(model)
    if len(model) > max_nodes:
        raise GraphTooLarge(f"tapegrad.viz.draw: the graph has {len(model)} nodes after collapsing repeated "
                            f"structure, more than max_nodes={max_nodes}: a picture that big is unreadable (and "
                            "slow to lay out). Draw a smaller part (one neuron or layer), pass max_nodes=... to "
                            "insist, or use tapegrad.viz.print_graph(root, max_depth=3) / "
                            "tapegrad.autograd.graph_stats(t).")
    return model


# --- DOT ----------------------------------------------------------------------------------------------------------
_STYLE = {
    "value": ('shape=record style=filled', '"#eef5ff"'),
    "tensor": ('shape=box style="filled,rounded"', "lightblue"),
    "op": ('shape=ellipse style=filled', '"#eeeeee"'),
    "saved": ('shape=box style="filled,dashed"', "orange"),
    "collapsed": ('shape=note style=filled', "lightyellow"),
}
_ROLE = {"root": "darkolivegreen1", "acc": "lightgray"}


def _esc(s):
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("{", "\\{").replace("}", "\\}") \
        .replace("|", "\\|").replace("<", "\\<").replace(">", "\\>")


def to_dot(model, rankdir="TB"):
    """DOT text of a graph model (what graphviz's ``dot`` program reads)."""
    out = ["digraph tapegrad {", f"  graph [rankdir={rankdir}]",
           '  node [fontname="monospace" fontsize=10 height=0.2]', '  edge [arrowsize=0.7]']
    for n in model.nodes.values():
        if n.kind == "value":
            label = "{ " + " | ".join(_esc(x) for x in n.lines) + " }" if rankdir == "TB" else \
                " | ".join(_esc(x) for x in n.lines)
        else:
            label = "\\n".join(_esc(x) for x in n.lines)
        style, fill = _STYLE[n.kind]
        out.append(f'  "{n.id}" [label="{label}" {style} fillcolor={_ROLE.get(n.role, fill)}]')
    for a, b, s in model.edges:
        out.append(f'  "{a}" -> "{b}"' + (f" [style={s}]" if s else ""))
    out.append("}")
    return "\n".join(out) + "\n"
