"""tapegrad.viz: the produced DOT and SVG, parsed — node labels, edge counts, grads before/after backward."""

import random
import re
import xml.etree.ElementTree as ET

import pytest

import tapegrad
from tapegrad import viz
from tapegrad.scalar import Value

_NODE = re.compile(r'^\s*"([^"]+)" \[label="((?:[^"\\]|\\.)*)"', re.M)
_EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)"(?: \[style=(\w+)\])?', re.M)
SVG = "{http://www.w3.org/2000/svg}"


def parse_dot(src):
    nodes = {m.group(1): m.group(2) for m in _NODE.finditer(src)}
    edges = [(m.group(1), m.group(2), m.group(3)) for m in _EDGE.finditer(src)]
    return nodes, edges


def parse_svg(svg):
    root = ET.fromstring(svg)
    groups = [g for g in root.iter(SVG + "g") if "node" in (g.get("class") or "").split()]
    texts = {g.get("id"): [t.text for t in g.iter(SVG + "text")] for g in groups}
    edges = [(e.get("data-src"), e.get("data-dst")) for e in root.iter(SVG + "line")]
    return texts, edges


def seed_L():
    a, b, c = Value(2.0, label="a"), Value(-3.0, label="b"), Value(10.0, label="c")
    L = a * b + c
    L.label = "L"
    return L, a, b, c


def test_value_graph_dot_before_and_after_backward():
    L, a, b, c = seed_L()
    before = viz.draw(L)
    nodes, edges = parse_dot(before.source)
    # 5 values + 2 ops; edges: L->+, +->(a*b), +->c, (a*b)->*, *->a, *->b
    assert len(nodes) == 7 and len(edges) == 6
    labels = list(nodes.values())
    assert any(lab.startswith("{ a | data 2.0000 | grad 0.0000") for lab in labels)
    assert sorted(lab for lab in labels if "|" not in lab) == ["*", "+"]
    L.backward()
    after_nodes, _ = parse_dot(viz.draw(L).source)
    text = " ".join(after_nodes.values())
    for name, g in (("a", "-3.0000"), ("b", "2.0000"), ("c", "1.0000"), ("L", "1.0000")):
        assert f"{{ {name} | data" in text and re.search(rf"{{ {name} \| data [-0-9.]+ \| grad {g} }}", text)
    # gradient direction: from the output L to its op, from the op to the inputs
    nid = {v.split(" |")[0].strip("{ "): k for k, v in after_nodes.items()}
    src, dst = {e[0] for e in parse_dot(viz.draw(L).source)[1]}, None
    assert nid["L"] in src and nid["a"] not in src and dst is None


def test_value_graph_svg_builtin_layout():
    L, a, b, c = seed_L()
    L.backward()
    g = viz.draw(L, engine="builtin")
    texts, edges = parse_svg(g.svg())
    assert len(texts) == 7 and len(edges) == 6
    flat = [t for ts in texts.values() for t in ts]
    assert "grad -3.0000" in flat and "+" in flat and "*" in flat
    assert g._repr_svg_().startswith("<svg")
    no_grad = viz.draw(L, show_grad=False)
    assert "| grad" not in no_grad.source and "data -3.0000" in no_grad.source


def test_tensor_graph_names_ops_and_leaves():
    x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
    w = tapegrad.tensor([3.0, 4.0], requires_grad=True)
    y = (x * w).exp().sum()
    g = viz.draw(y, params={"x": x, "w": w}, engine="builtin")
    nodes, edges = parse_dot(g.source)
    labels = [lab.split("\\n")[0] for lab in nodes.values()]
    assert sorted(labels) == sorted(["output", "SumBackward0", "ExpBackward0", "MulBackward0", "AccumulateGrad",
                                     "AccumulateGrad", "x", "w"])
    assert len(edges) == 7
    assert all("grad None" in lab for lab in nodes.values() if lab.startswith(("x\\n", "w\\n")))
    y.backward()
    after, _ = parse_dot(viz.draw(y, params={"x": x, "w": w}).source)
    xlab = next(lab for lab in after.values() if lab.startswith("x\\n"))
    assert "(2) float32" in xlab and "data [1, 2]" in xlab and "grad [60.26, 1.192e+04]" in xlab
    # after backward the saved tensors are freed, and the picture says so
    assert any("(saved freed)" in lab for lab in after.values())


def test_tensor_graph_saved_tensors_dashed():
    x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
    w = tapegrad.tensor([3.0, 4.0], requires_grad=True)
    y = (x * w).exp().sum()
    nodes, edges = parse_dot(viz.draw(y, show_saved=True, params={"x": x, "w": w}).source)
    dashed = [e for e in edges if e[2] == "dashed"]
    saved_labels = sorted(nodes[e[1]].split("\\n")[0] for e in dashed)
    assert saved_labels == ["saved result", "saved w", "saved x"]
    texts, svg_edges = parse_svg(viz.draw(y, show_saved=True).svg())
    assert len(svg_edges) == len(edges) and len(texts) == len(nodes)


def test_x_times_x_shows_two_edges_like_next_functions():
    x = tapegrad.tensor(3.0, requires_grad=True)
    g = viz.draw(x * x)
    _, edges = parse_dot(g.source)
    assert len(edges) == 4   # output->Mul, Mul->Acc twice (next_functions lists x twice), Acc->x


def test_save_formats(tmp_path):
    L, *_ = seed_L()
    g = viz.draw(L)
    g.save(tmp_path / "g.dot")
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    g.save(tmp_path / "g.svg")
    ET.fromstring((tmp_path / "g.svg").read_text())
    try:
        import matplotlib  # noqa: F401
        have_png = True
    except ImportError:
        have_png = viz.render.have_dot()
    if have_png:
        g.save(tmp_path / "g.png")
        assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="cannot save as 'jpg'"):
        g.save(tmp_path / "g.jpg")


def test_long_chain_collapses():
    x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
    w = tapegrad.tensor([1.0, 1.0], requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * w
    g = viz.draw(y)
    g.svg()
    assert len(g.nodes) < 30
    collapsed = [n for n in g.nodes if n.kind == "collapsed"]
    assert len(collapsed) == 1 and "MulBackward0" in collapsed[0].lines[0]
    v = Value(1.0)
    z = v
    for _ in range(10_000):
        z = z.tanh()
    gv = viz.draw(z)
    assert len(gv.nodes) < 30 and any(n.kind == "collapsed" for n in gv.nodes)


def test_wide_graph_is_refused_with_a_clear_message():
    # a sum of squares is a repeated structure (it collapses); random ops are not
    rng = random.Random(0)
    z = Value(0.5)
    for i in range(5_000):
        z = getattr(z, rng.choice(["tanh", "sin", "cos", "sigmoid", "relu", "exp"]))() * 0.5 + Value(i * 1e-4)
    with pytest.raises(viz.GraphTooLarge, match="max_nodes"):
        viz.draw(z)


def test_bad_input():
    with pytest.raises(TypeError, match="expected a Tensor or a tapegrad.scalar.Value"):
        viz.draw(3.0)


def test_print_graph_value_and_tensor(capsys):
    a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    L = (a * b + a).tanh()
    L.backward()
    viz.print_graph(L)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("tanh data=-0.9993 grad=1.0000")
    assert out[1].startswith("  + data=-4.0000")
    assert any(line.strip() == "a (seen above)" for line in out)
    x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).sum()
    y.backward()
    viz.print_graph(y, params={"x": x})
    out = capsys.readouterr().out.splitlines()
    assert out == ["tensor () data=6 grad_fn=SumBackward0", "  SumBackward0 ()", "    MulBackward0 (2,)",
                   "      AccumulateGrad -> x (2,) data=[1, 2] grad=[2, 2]"]
