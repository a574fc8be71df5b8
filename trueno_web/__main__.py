"""Command line: `python -m trueno_web demo` | `python -m trueno_web serve [--port N]`."""

from __future__ import annotations

import argparse
import sys

from .app.demo import run_demo
from .app.server import serve_forever
from .runtime import block_on


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trueno_web", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="print the adapter, run every op on the GPU and the CPU fallback, time a chain")
    serve = sub.add_parser("serve", help="serve the static demo page on 127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    if args.command == "demo":
        block_on(run_demo())
        return 0
    return serve_forever(args.host, args.port)


if __name__ == "__main__":
    sys.exit(main())
