"""``python -m tapegrad demo``: the main job (see ``tapegrad.demo``)."""

import sys

USAGE = ("usage: python -m tapegrad demo [--help] [options]   (the main job: python -m tapegrad demo --help)\n"
         "       python -m tapegrad.parity SCRIPT.py           (a PyTorch script on torch and on tapegrad)\n"
         "       python -m tapegrad --version")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if argv[0] in ("-V", "--version"):
        from .torch_version import TAPEGRAD, TORCH_API
        print(f"tapegrad {TAPEGRAD} (torch {TORCH_API}'s API)")
        return 0
    if argv[0] == "demo":
        from .demo import main as demo_main
        return demo_main(argv[1:])
    print(f"{USAGE}\npython -m tapegrad: error: unknown command {argv[0]!r} (the command is demo)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
