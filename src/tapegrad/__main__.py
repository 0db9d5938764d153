"""``python -m tapegrad demo``: the main job (see ``tapegrad.demo``)."""

import sys


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m tapegrad demo [--help]   |   python -m tapegrad.parity SCRIPT.py")
        return 0
    if argv[0] == "demo":
        from .demo import main as demo_main
        return demo_main(argv[1:])
    print(f"unknown command {argv[0]!r}; try: python -m tapegrad demo")
    return 2


if __name__ == "__main__":
    sys.exit(main())
