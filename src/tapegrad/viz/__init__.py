"""tapegrad.viz: pictures (and a text view) of the autograd graph, for ``Tensor`` and ``scalar.Value`` graphs.

>>> from tapegrad.scalar import Value
>>> a, b, c = Value(2.0, label="a"), Value(-3.0, label="b"), Value(10.0, label="c")
>>> L = a * b + c; L.label = "L"
>>> g = draw(L)              # before backward: the bookkeeping (grads are 0)
>>> L.backward()
>>> g = draw(L)              # after: the accountability (grads filled in)
>>> g.save("graph.svg")      # or .png / .dot; in Jupyter, `g` alone shows the picture  # doctest: +SKIP

``draw`` uses graphviz's ``dot`` program when it is installed and a small built-in layout otherwise.
``print_graph(root)`` prints the same graph as indented text.
"""

from __future__ import annotations

import os

from .dot import GraphModel, GraphTooLarge, build, to_dot
from .render import dot_render, have_dot, to_png, to_svg

__all__ = ["draw", "print_graph", "Graph", "GraphTooLarge"]


class Graph:
    """A drawn graph: ``.source`` (DOT), ``.svg()``, ``.save(path)``; shows itself inline in Jupyter."""

    def __init__(self, model: GraphModel, rankdir="TB", engine=None):
        self.model = model
        self.rankdir = rankdir
        self.source = to_dot(model, rankdir)
        self.engine = engine or ("dot" if have_dot() else "builtin")

    @property
    def nodes(self):
        return list(self.model.nodes.values())

    @property
    def edges(self):
        return list(self.model.edges)

    def svg(self) -> str:
        """The picture as SVG text."""
        if self.engine == "dot":
            return dot_render(self.source, "svg").decode()
        return to_svg(self.model)

    def _repr_svg_(self):
        return self.svg()

    def save(self, path, format=None):  # noqa: A002 - graphviz's name
        """Write ``path`` as .svg, .png or .dot (from the extension unless ``format`` is given)."""
        fmt = (format or os.path.splitext(str(path))[1].lstrip(".")).lower()
        if fmt in ("dot", "gv"):
            data = self.source.encode()
        elif fmt == "svg":
            data = self.svg().encode()
        elif fmt == "png":
            if self.engine == "dot":
                data = dot_render(self.source, "png")
            else:
                to_png(self.model, path)
                return path
        else:
            raise ValueError(f"tapegrad.viz: cannot save as {fmt!r}; use a .svg, .png or .dot file name")
        with open(path, "wb") as f:
            f.write(data)
        return path

    def __repr__(self):
        return f"<tapegrad.viz.Graph: {len(self.model.nodes)} nodes, {len(self.model.edges)} edges>"


def draw(root, show_grad=True, show_saved=False, params=None, max_nodes=1000, engine=None):
    """Draw the graph that computed ``root`` (a Tensor, a ``scalar.Value``, or a list of them).

    Nodes: tensors/values (name from ``params`` — a dict name -> tensor, e.g. ``dict(model.named_parameters())``
    — or the Value's ``label``; shape; data; grad with ``show_grad``) and operations (``MulBackward0``,
    ``AccumulateGrad``); with ``show_saved``, what each node saved for backward. Edges go the way gradients flow.
    ``engine``: ``"dot"`` (graphviz) or ``"builtin"``; the default is graphviz when its ``dot`` program is installed.

    >>> import tapegrad
    >>> x = tapegrad.tensor([1., 2.], requires_grad=True)
    >>> draw((x * x).sum(), params={"x": x})
    <tapegrad.viz.Graph: 5 nodes, 5 edges>
    """
    if engine not in (None, "dot", "builtin"):
        raise ValueError(f"tapegrad.viz.draw: engine must be 'dot' or 'builtin', got {engine!r}")
    if engine == "dot" and not have_dot():
        raise RuntimeError("tapegrad.viz.draw: engine='dot' needs graphviz's `dot` program on the PATH")
    model = build(root, show_grad=show_grad, show_saved=show_saved, params=params, max_nodes=max_nodes)
    return Graph(model, engine=engine)


def print_graph(root, max_depth=None, max_lines=400, file=None, params=None):
    """Print the graph as indented text: each node's op, shape, value and grad (the seed's exercise 2).

    A node reached again (a value used twice) is shown once, then as "(seen above)". ``params`` names leaf
    tensors (a dict name -> tensor).

    >>> from tapegrad.scalar import Value
    >>> a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    >>> L = a * b + a; L.backward()
    >>> print_graph(L)
    + data=-4.0000 grad=1.0000
      * data=-6.0000 grad=1.0000
        a data=2.0000 grad=-2.0000
        b data=-3.0000 grad=2.0000
      a (seen above)
    """
    lines = []
    names = {id(t): n for n, t in (dict(params) if params else {}).items()}
    _text(root, lines, max_depth, max_lines, names)
    text = "\n".join(lines)
    print(text, file=file)


def _text(root, lines, max_depth, max_lines, names):
    from ..scalar.value import Value
    from .._format import short_array, short_number
    is_value = isinstance(root, Value)
    seen = set()
    if is_value:
        stack = [(root, 0)]
    else:
        from ..autograd.function import AccumulateGrad
        fn = root.grad_fn.name() if root.grad_fn else None
        lines.append(f"tensor {tuple(root.shape)} data={short_array(root._array)} grad_fn={fn}")
        if root.grad_fn is None:
            return
        stack = [(root.grad_fn, 1)]
    while stack:
        if len(lines) >= max_lines:
            lines.append(f"... (stopped after {max_lines} lines; pass max_lines= or max_depth=)")
            return
        obj, d = stack.pop()
        pad = "  " * d
        if is_value:
            name = obj.label or obj._op or "leaf"
            if id(obj) in seen:
                lines.append(f"{pad}{name} (seen above)")
                continue
            seen.add(id(obj))
            op = f" [{obj._op}]" if obj.label and obj._op else ""
            lines.append(f"{pad}{name}{op} data={short_number(obj.data)} grad={short_number(obj.grad)}")
            if max_depth is None or d < max_depth:
                kids = list(dict.fromkeys(obj._kids))
                stack.extend((k, d + 1) for k in reversed(kids))
        else:
            if id(obj) in seen:
                lines.append(f"{pad}{obj.name()} (seen above)")
                continue
            seen.add(id(obj))
            if obj.__class__ is AccumulateGrad:
                v = obj.variable
                g = None if v is None or v._grad is None else short_array(v._grad._array)
                desc = "" if v is None else \
                    f" -> {names.get(id(v), 'leaf')} {tuple(v.shape)} data={short_array(v._array)} grad={g}"
                lines.append(f"{pad}AccumulateGrad{desc}")
                continue
            meta = getattr(obj, "_out_meta", None) or [None]
            shape = f" {tuple(meta[0][0])}" if meta[0] is not None else ""
            lines.append(f"{pad}{obj.name()}{shape}")
            if max_depth is None or d < max_depth:
                nxt = [n for n, _ in obj.next_functions if n is not None]
                stack.extend((n, d + 1) for n in reversed(nxt))
