"""`refpool`: a thin command-line shell over the Python API.

Each package registers its own subcommands (generators/cli.py, curation/cli.py, pool/cli.py);
this file only assembles them. Handlers parse arguments, call library functions, print.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Modules exposing `register(subparsers)`; imported lazily so one broken optional part
# cannot take the whole CLI down.
COMMAND_MODULES = ("renderer.cli", "generators.cli", "curation.cli", "pool.cli")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="refpool",
        description="Build, curate and publish reference pools of p5.brush paintings.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # that part has not landed yet
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted; finished work is saved, rerun to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
