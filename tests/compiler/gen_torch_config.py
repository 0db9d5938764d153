"""Regenerate src/tapegrad/compiler/torch_config.json from the installed torch: the names and defaults of
torch._dynamo.config and torch._inductor.config (the switches training scripts set), so
that tapegrad's config modules accept exactly torch's keys. Defaults that are not JSON data (sets become sorted
lists; objects, functions and absolute paths become null).

    python tests/compiler/gen_torch_config.py [--check]
"""

from __future__ import annotations

import json
import pathlib
import sys

OUT = pathlib.Path(__file__).resolve().parents[2] / "src" / "tapegrad" / "compiler" / "torch_config.json"


def _plain(v):
    if type(v) is str and v.startswith("/"):
        return None                  # (a path on the machine that generated the table)
    if v is None or type(v) in (bool, int, float, str):
        return v
    if isinstance(v, (list, tuple)):
        items = [_plain(x) for x in v]
        return items if all(x is not None or y is None for x, y in zip(items, v)) else None
    if isinstance(v, (set, frozenset)):
        items = [_plain(x) for x in v]
        return sorted(items, key=repr) if all(x is not None for x in items) else None
    if isinstance(v, dict) and all(type(k) is str for k in v):
        items = {k: _plain(x) for k, x in v.items()}
        return items if all(items[k] is not None or v[k] is None for k in v) else None
    return None


def table():
    import torch._dynamo.config as dynamo
    import torch._inductor.config as inductor
    out = {}
    for name, mod in (("dynamo", dynamo), ("inductor", inductor)):
        keys, aliases = {}, {}
        for k, entry in sorted(mod._config.items()):
            alias = getattr(entry, "alias", None)
            if alias:
                aliases[k] = alias.rsplit(".", 1)[1]
            else:
                keys[k] = _plain(entry.default)
        out[name] = {"keys": keys, "aliases": aliases}
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    text = json.dumps(table(), indent=0, sort_keys=True) + "\n"
    if "--check" in argv:
        if OUT.read_text() != text:
            print(f"{OUT} is out of date: run python {pathlib.Path(__file__).name}")
            return 1
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
