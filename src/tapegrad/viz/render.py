"""Turning a graph model into a picture: graphviz's ``dot`` when installed, else a small built-in layout.

The built-in layout is the classic layered drawing: each node goes on the row of its longest distance from the
output (so every edge points down, the way gradients flow), nodes in a row are ordered by the average position
of their neighbours (a few sweeps, to untangle crossings), and rows are centred. SVG is written by hand (no
dependency); PNG draws the same layout with matplotlib when graphviz is missing.
"""

from __future__ import annotations

import shutil
import subprocess
from xml.sax.saxutils import escape

from .dot import layers

__all__ = ["layout", "to_svg", "to_png", "have_dot", "dot_render"]

_CHAR_W, _LINE_H, _PAD, _ROW_GAP, _COL_GAP = 7.0, 14.0, 8.0, 36.0, 18.0
_FILL = {"value": "#eef5ff", "tensor": "#add8e6", "op": "#eeeeee", "saved": "#ffa500", "collapsed": "#ffffe0"}
_ROLE_FILL = {"root": "#caff70", "acc": "#d3d3d3"}


def have_dot():
    """True when graphviz's ``dot`` program is on the PATH."""
    return shutil.which("dot") is not None


def dot_render(source, fmt):
    """Render DOT text with the ``dot`` program (bytes of the ``fmt`` file): through the ``graphviz`` package
    when it is installed, else by running ``dot`` directly (the package is only a wrapper around it)."""
    try:
        import graphviz
    except ImportError:
        graphviz = None
    if graphviz is not None:
        return graphviz.Source(source).pipe(format=fmt)
    r = subprocess.run(["dot", f"-T{fmt}"], input=source.encode(), capture_output=True, timeout=60, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"graphviz's dot failed: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout


def layout(model, sweeps=4):
    """Positions of the nodes: ``{id: (x, y, w, h)}`` (top-left corner, size) and the canvas (W, H)."""
    layer = layers(model)
    depth = max(layer.values(), default=-1) + 1
    rows = [[] for _ in range(depth)]
    for k in model.nodes:           # insertion order: a stable, sensible start
        rows[layer[k]].append(k)
    up, down = {k: [] for k in model.nodes}, {k: [] for k in model.nodes}
    for a, b, _ in model.edges:
        down[a].append(b)
        up[b].append(a)
    pos = {}
    for row in rows:
        for i, k in enumerate(row):
            pos[k] = float(i)
    for s in range(sweeps):   # barycentre heuristic, alternating downward and upward sweeps
        seq = range(1, depth) if s % 2 == 0 else range(depth - 2, -1, -1)
        nb = up if s % 2 == 0 else down
        for r in seq:
            row = rows[r]
            bary = {k: (sum(pos[n] for n in nb[k]) / len(nb[k]) if nb[k] else pos[k]) for k in row}
            row.sort(key=bary.__getitem__)
            for i, k in enumerate(row):
                pos[k] = float(i)
    size = {}
    for k, n in model.nodes.items():
        w = max(len(x) for x in n.lines) * _CHAR_W + 2 * _PAD + (16 if n.kind == "op" else 0)
        size[k] = (w, len(n.lines) * _LINE_H + _PAD)
    widths = [sum(size[k][0] for k in row) + _COL_GAP * max(len(row) - 1, 0) for row in rows]
    W = max(widths, default=0) + 2 * _PAD
    boxes, y = {}, _PAD
    for row, rw in zip(rows, widths):
        x = (W - rw) / 2
        h = max((size[k][1] for k in row), default=0)
        for k in row:
            w, hk = size[k]
            boxes[k] = (x, y + (h - hk) / 2, w, hk)
            x += w + _COL_GAP
        y += h + _ROW_GAP
    return boxes, (W, max(y - _ROW_GAP + _PAD, 2 * _PAD))


def _fill(n):
    return _ROLE_FILL.get(n.role, _FILL[n.kind])


def to_svg(model):
    """An SVG picture of the model with the built-in layout (a string)."""
    boxes, (W, H) = layout(model)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W:.0f}pt" height="{H:.0f}pt" '
           f'viewBox="0 0 {W:.0f} {H:.0f}" font-family="monospace" font-size="11">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#444"/></marker></defs>',
           '<g class="edges">']
    for a, b, style in model.edges:
        xa, ya, wa, ha = boxes[a]
        xb, yb, wb, _ = boxes[b]
        dash = ' stroke-dasharray="4 3"' if style == "dashed" else ""
        out.append(f'<line class="edge" data-src="{escape(a)}" data-dst="{escape(b)}" x1="{xa + wa / 2:.1f}" '
                   f'y1="{ya + ha:.1f}" x2="{xb + wb / 2:.1f}" y2="{yb:.1f}" stroke="#444"{dash} '
                   'marker-end="url(#arrow)"/>')
    out.append('</g><g class="nodes">')
    for k, n in model.nodes.items():
        x, y, w, h = boxes[k]
        out.append(f'<g class="node {n.kind}" id="{escape(k)}">')
        if n.kind == "op":
            out.append(f'<ellipse cx="{x + w / 2:.1f}" cy="{y + h / 2:.1f}" rx="{w / 2:.1f}" ry="{h / 2:.1f}" '
                       f'fill="{_fill(n)}" stroke="#333"/>')
        else:
            dash = ' stroke-dasharray="4 3"' if n.kind == "saved" else ""
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="4" '
                       f'fill="{_fill(n)}" stroke="#333"{dash}/>')
        for i, line in enumerate(n.lines):
            weight = ' font-weight="bold"' if i == 0 else ""
            out.append(f'<text x="{x + w / 2:.1f}" y="{y + _PAD / 2 + (i + 0.78) * _LINE_H:.1f}" '
                       f'text-anchor="middle"{weight}>{escape(line)}</text>')
        out.append("</g>")
    out.append("</g></svg>")
    return "\n".join(out) + "\n"


def to_png(model, path, dpi=110):
    """Draw the built-in layout with matplotlib into a PNG file (matplotlib needed)."""
    try:
        import matplotlib
        matplotlib.use("Agg", force=False)
        from matplotlib.figure import Figure
        from matplotlib.patches import Ellipse, FancyArrowPatch, FancyBboxPatch
    except ImportError:
        raise RuntimeError("tapegrad.viz: saving a PNG needs graphviz (the `dot` program) or matplotlib; "
                           "neither is installed. Save as .svg (no dependency) or .dot instead, or "
                           "`pip install matplotlib`.") from None
    boxes, (W, H) = layout(model)
    scale = 1 / 72   # layout units are points
    fig = Figure(figsize=(max(W * scale, 1), max(H * scale, 1)), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, W)
    ax.set_ylim(H, 0)
    ax.axis("off")
    for a, b, style in model.edges:
        xa, ya, wa, ha = boxes[a]
        xb, yb, wb, _ = boxes[b]
        ax.add_patch(FancyArrowPatch((xa + wa / 2, ya + ha), (xb + wb / 2, yb), arrowstyle="-|>",
                                     mutation_scale=10, color="#444",
                                     linestyle="--" if style == "dashed" else "-", linewidth=0.8))
    for k, n in model.nodes.items():
        x, y, w, h = boxes[k]
        if n.kind == "op":
            ax.add_patch(Ellipse((x + w / 2, y + h / 2), w, h, facecolor=_fill(n), edgecolor="#333", lw=0.8))
        else:
            ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0,rounding_size=4", facecolor=_fill(n),
                                        edgecolor="#333", lw=0.8, linestyle="--" if n.kind == "saved" else "-"))
        for i, line in enumerate(n.lines):
            ax.text(x + w / 2, y + _PAD / 2 + (i + 0.5) * _LINE_H, line, ha="center", va="center",
                    family="monospace", fontsize=8, fontweight="bold" if i == 0 else "normal")
    fig.savefig(path, dpi=dpi)
