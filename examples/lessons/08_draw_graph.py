"""The seed's first example, L = a*b + c, drawn before and after backward ("bookkeeping, then accountability").

    python examples/lessons/08_draw_graph.py [OUT_DIR]     # writes before/after .svg (and .png if possible)

Tools: ``tapegrad.viz.draw`` (graphviz if installed, else a built-in layout) for Values and for tensors.
"""

import os
import sys
import tempfile

import _path  # noqa: F401

import tapegrad
from tapegrad import viz
from tapegrad.scalar import Value


def seed_graph():
    a, b, c = Value(2.0, label="a"), Value(-3.0, label="b"), Value(10.0, label="c")
    e = a * b
    e.label = "e"
    L = e + c
    L.label = "L"
    return L


def main(out_dir):
    L = seed_graph()
    before = viz.draw(L)
    before.save(os.path.join(out_dir, "graph_before.svg"))
    L.backward()
    after = viz.draw(L)
    after.save(os.path.join(out_dir, "graph_after.svg"))
    print(f"{len(after.nodes)} nodes, {len(after.edges)} edges; engine: {after.engine}")
    print("before:", [n.lines for n in before.nodes if n.kind == "value"][0])
    print("after :", [n.lines for n in after.nodes if n.kind == "value"][0])
    try:
        after.save(os.path.join(out_dir, "graph.png"))
        print("png written")
    except RuntimeError as e:
        print("no png:", e)

    a = tapegrad.tensor(2.0, requires_grad=True)
    b = tapegrad.tensor(-3.0, requires_grad=True)
    c = tapegrad.tensor(10.0, requires_grad=True)
    Lt = a * b + c
    Lt.backward(retain_graph=True)
    g = viz.draw(Lt, params={"a": a, "b": b, "c": c})
    g.save(os.path.join(out_dir, "graph_tensor.svg"))
    print("tensor graph:", sorted(n.lines[0] for n in g.nodes))
    print(g.source.splitlines()[0])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.gettempdir())
