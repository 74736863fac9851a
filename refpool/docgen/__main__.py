"""`python -m refpool.docgen [--check] [--root DIR]`: write, or check, the reference pages."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from refpool.docgen import stale, write


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m refpool.docgen", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if a page is out of date")
    parser.add_argument("--root", type=Path, default=Path("."), help="the project's root")
    args = parser.parse_args(argv)
    if args.check:
        out_of_date = stale(args.root)
        for rel in out_of_date:
            print(f"stale: {rel}", file=sys.stderr)
        if out_of_date:
            print("run `python -m refpool.docgen` (or `make docs`) and commit", file=sys.stderr)
        return 1 if out_of_date else 0
    for rel in write(args.root):
        print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
