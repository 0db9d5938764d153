"""``Compare``: many ``Measurement``s as one table per label, as torch.utils.benchmark lays it out.

A table's rows are the measurements' sub-labels (statements when there is none), grouped by thread count (a
``N threads: ----`` separator line before each group) and env; its columns are their descriptions; each cell is a
median in the unit that suits the table's fastest entry. ``trim_significant_figures`` prints only the digits
the spread supports, ``colorize`` marks the best (green) to the worst (red) per column or row,
``highlight_warnings`` appends ``(! XX%)`` to noisy cells.
"""

from __future__ import annotations

import collections
import enum
import math

from . import common
from .common import _log10_f32

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(value):
    return int(math.ceil(_log10_f32(value)))


class _Column:
    """One column's number format: as many integer digits as its largest entry, and one decimal (or, trimmed,
    as many as its least precise entry supports)."""

    def __init__(self, groups, time_scale, trim, highlight):
        self.groups = groups                               # per thread group, the column's cells (None: empty)
        cells = [m for g in groups for m in g if m is not None]
        self.trim = trim
        self.highlight = highlight and any(m.has_warnings for m in cells)
        digits = [_leading_digits(m.median / time_scale) for m in cells]
        decimals = min(max(m.significant_figures - d, 0) for m, d in zip(cells, digits)) if trim else 1
        width = max(digits) + decimals + (1 if decimals else 0)
        self._number = f"{{:>{width}.{decimals}f}}"
        self._note_width = 7 if self.highlight else 0

    def num_to_str(self, value, sigfigs, spread):
        if value is None:
            return " " * len(self.num_to_str(1, sigfigs, None))
        if self.trim:
            value = common.trim_sigfig(value, sigfigs)
        note = f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None else ""
        return self._number.format(value) + note.rjust(self._note_width)


def _color(text, value, best):
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + text + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + text + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + text + TERMINATE * 2
    if value >= best * 2:
        return BAD + text + TERMINATE * 2
    return text


class _Table:
    """The measurements of one label."""

    def __init__(self, results, colorize, trim, highlight):
        self.results, self.colorize, self.highlight = results, colorize, highlight
        self.label = results[0].label
        self.unit, self.scale = common.select_unit(min(m.median for m in results))
        row_keys = common.ordered_unique((m.num_threads, m.env, m.as_row_name) for m in results)
        # threads, then env, else first-seen order (the sort is stable)
        self.row_keys = sorted(row_keys, key=lambda k: (k[0], "" if k[1] is None else str(k[1])))
        self.col_keys = common.ordered_unique(m.description for m in results)
        where_row = {k: i for i, k in enumerate(self.row_keys)}
        where_col = {k: j for j, k in enumerate(self.col_keys)}
        self.grid = [[None] * len(self.col_keys) for _ in self.row_keys]
        for m in results:
            self.grid[where_row[(m.num_threads, m.env, m.as_row_name)]][where_col[m.description]] = m

        envs = {m.env for m in results}
        self.show_env = len(envs) > 1
        self.env_width = max(len(str(e)) for e in envs) if self.show_env else 0
        # rows: (group index, thread count to announce or None, whether to print the env)
        self.row_info, group, prior_threads, prior_env = [], -1, None, ""
        for threads, env, _ in self.row_keys:
            new_group = threads != prior_threads
            if new_group:
                group, prior_threads, prior_env = group + 1, threads, ""
            self.row_info.append((group, threads if new_group else None, self.show_env and env != prior_env))
            prior_env = env
        groups = [[] for _ in range(group + 1)]
        for (g, _, _), row in zip(self.row_info, self.grid):
            groups[g].append(row)
        self.columns = [_Column([[row[j] for row in g] for g in groups], self.scale, trim, highlight)
                        for j in range(len(self.col_keys))]

    def _row_strings(self, row, show_env):
        first = next(m for m in row if m is not None)
        env = f"({first.env})" if show_env else ""
        out = ["  " + env.ljust(self.env_width + 4) + first.as_row_name]
        for m, col in zip(row, self.columns):
            if m is None:
                out.append(col.num_to_str(None, 1, None))
            else:
                out.append(col.num_to_str(m.median / self.scale, m.significant_figures,
                                          m.iqr / m.median if m.has_warnings else None))
        return out

    def _best(self, row, group):
        if self.colorize == Colorize.ROWWISE:
            best = min(m.median for m in row if m is not None)
            return [best] * len(row)
        if self.colorize == Colorize.COLUMNWISE:
            return [min((m.median for m in col.groups[group] if m is not None), default=None)
                    for col in self.columns]
        return [None] * len(row)

    def render(self) -> str:
        strings = [[""] + ["" if k is None else str(k) for k in self.col_keys]]
        strings += [self._row_strings(row, info[2]) for row, info in zip(self.grid, self.row_info)]
        widths = [max(len(s) for s in column) for column in zip(*strings)]
        header = "  |  ".join(s.center(w) for s, w in zip(strings[0], widths))
        lines = [header]
        for cells, row, (group, threads, _) in zip(strings[1:], self.grid, self.row_info):
            if threads is not None:
                lines.append(f"{threads} threads: ".ljust(len(header), "-"))
            parts = [cells[0].ljust(widths[0])]
            for text, width, m, best in zip(cells[1:], widths[1:], row, self._best(row, group)):
                text = text.center(width)
                if self.colorize != Colorize.NONE and m is not None and best is not None:
                    text = _color(text, m.median, best)
                parts.append(text)
            lines.append("  |  ".join(parts))
        title = f" {self.label or ''} ".center(len(header) - 2, "-")
        noisy = self.highlight and any(m.has_warnings for m in self.results)
        note = "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n" if noisy else ""
        body = "\n".join(lines)
        return f"[{title}]\n{body}\n\nTimes are in {common.unit_to_english(self.unit)}s ({self.unit}).\n{note}"


class Compare:
    """Print many measurements as tables, one per label (see the module's docstring): ``print()`` or
    ``str(compare)``. Replicates of one task (same stmt, labels, env, threads) are pooled first."""

    def __init__(self, results) -> None:
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results) -> None:
        """Add more measurements (each must be a ``Measurement``)."""
        results = list(results)
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Print only the digits each measurement's spread supports."""
        self._trim_significant_figures = True

    def colorize(self, rowwise=False) -> None:
        """Color the cells by how far they are from the best of their column (or row, ``rowwise=True``)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Mark noisy cells with ``(! XX%)``, XX the IQR as a percentage of the median."""
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def _render(self):
        by_label = collections.defaultdict(list)
        for m in common.Measurement.merge(self._results):
            by_label[m.label].append(m)
        return [_Table(group, self._colorize, self._trim_significant_figures, self._highlight_warnings).render()
                for group in by_label.values()]
