"""``tapegrad.autograd.graph_stats(t)``: how big is the graph behind a tensor, and what memory does it hold?

>>> import tapegrad
>>> x = tapegrad.ones(1000, requires_grad=True)
>>> s = graph_stats((x.exp() * 2).sum())
>>> s.nodes, s.depth, s.saved_bytes
(4, 4, 4000)
>>> print(s)                                                             # doctest: +SKIP
graph: 4 nodes, depth 4, 4000 bytes saved for backward (3.9 KiB)
 depth  node            saved              bytes
     1  SumBackward0                           0
     ...

``saved_bytes`` is what the graph keeps for backward (counted once per array): ``backward()`` frees it;
``backward(retain_graph=True)`` keeps it. Per node: ``s.per_node`` (``NodeStats``: name, depth, saved, bytes).
"""

from __future__ import annotations

__all__ = ["graph_stats", "GraphStats", "NodeStats"]


class NodeStats:
    """One node: ``name``, ``depth`` (edges from the root), ``saved`` [(what, shape, nbytes)], ``bytes``, ``freed``."""

    __slots__ = ("node", "name", "depth", "saved", "bytes", "freed")

    def __init__(self, node, name, depth, saved, nbytes, freed):
        self.node, self.name, self.depth, self.saved, self.bytes, self.freed = node, name, depth, saved, nbytes, freed

    def __repr__(self):
        return f"NodeStats({self.name}, depth={self.depth}, bytes={self.bytes})"


class GraphStats:
    """Totals (``nodes``, ``depth``, ``saved_bytes``, ``leaves``) and ``per_node`` rows, printable as a table."""

    def __init__(self, per_node, saved_bytes, leaves):
        self.per_node = per_node
        self.nodes = len(per_node)
        self.depth = max((p.depth for p in per_node), default=0)
        self.saved_bytes = saved_bytes
        self.leaves = leaves

    def table(self, max_rows=50):
        head = (f"graph: {self.nodes} nodes, depth {self.depth}, {self.saved_bytes} bytes saved for backward "
                f"({_human(self.saved_bytes)}), {self.leaves} leaves")
        rows = [("depth", "node", "saved", "bytes")]
        for p in self.per_node[:max_rows]:
            saved = "freed" if p.freed else ", ".join(f"{w}{tuple(s)}" for w, s, _ in p.saved)
            rows.append((str(p.depth), p.name, saved, str(p.bytes)))
        w = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = [head] + [f"{r[0].rjust(w[0])}  {r[1].ljust(w[1])}  {r[2].ljust(w[2])}  {r[3].rjust(w[3])}"
                          for r in rows]
        if self.nodes > max_rows:
            lines.append(f"... {self.nodes - max_rows} more nodes (see .per_node)")
        return "\n".join(lines)

    def __str__(self):
        return self.table()

    def __repr__(self):
        return f"<GraphStats: {self.nodes} nodes, depth {self.depth}, {self.saved_bytes} bytes saved>"


def _human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def _saved_of(node):
    """[(what, shape, ndarray)] saved by a node: its saved tensors and the arrays it keeps on ctx."""
    import numpy as np

    from .function import saved_entries
    out = []
    entries = saved_entries(node)
    freed = entries == "freed"
    if entries and not freed:
        for kind, arr, _ in entries:
            out.append((kind, arr.shape, arr))
    saved = getattr(node, "_saved", None)
    if saved and not freed:
        for s in saved:
            if isinstance(s, np.ndarray):
                out.append(("array", s.shape, s))
    d = getattr(node, "__dict__", None)
    if d:
        for k, v in d.items():
            if isinstance(v, np.ndarray):
                out.append((k, v.shape, v))
    return out, freed


def graph_stats(t):
    """Count the nodes, the depth and the bytes saved for backward in the graph that made tensor ``t``.

    Also accepts a ``grad_fn`` node, or a ``tapegrad.scalar.Value`` (nodes and depth; Values save no arrays).
    """
    from .function import AccumulateGrad
    from ..scalar.value import Value          # (on use: the engine does not import the scalar engine)
    if isinstance(t, Value):
        order = t._topo()
        depth = {id(t): 0}
        rows = []
        for v in order:
            d = depth.get(id(v), 0)
            rows.append(NodeStats(v, v._op or "leaf", d, [], 0, False))
            for k in v._kids:
                if depth.get(id(k), -1) < d + 1:
                    depth[id(k)] = d + 1
        return GraphStats(rows, 0, sum(1 for v in order if v._k0 is None))
    root = getattr(t, "grad_fn", t) if not hasattr(t, "next_functions") else t
    if root is None:
        return GraphStats([], 0, 0)
    seen, stack = {id(root): root}, [root]
    while stack:
        n = stack.pop()
        for nxt, _ in n.next_functions:
            if nxt is not None and id(nxt) not in seen:
                seen[id(nxt)] = nxt
                stack.append(nxt)
    order = sorted(seen.values(), key=lambda n: n.sequence_nr, reverse=True)
    depth = {id(root): 1}
    rows, arrays, leaves = [], {}, 0
    for n in order:
        d = depth.get(id(n), 1)
        if n.__class__ is AccumulateGrad:
            leaves += 1
            rows.append(NodeStats(n, n.name(), d, [], 0, False))
            continue
        saved, freed = _saved_of(n)
        nbytes = 0
        for _, _, arr in saved:
            nbytes += arr.nbytes
            arrays[id(arr)] = arr.nbytes
        rows.append(NodeStats(n, n.name(), d, [(w, s, a.nbytes) for w, s, a in saved], nbytes, freed))
        for nxt, _ in n.next_functions:
            if nxt is not None and depth.get(id(nxt), 0) < d + 1:
                depth[id(nxt)] = d + 1
    return GraphStats(rows, sum(arrays.values()), leaves)
