"""The refpool curation studio: `python app.py` opens it on the data directory.

    python app.py [--host 127.0.0.1] [--port 7860] [--auth] [--blind] [--curator NAME]

Data comes from $REFPOOL_HOME (default ./refpool-data). The same studio is behind
`refpool studio`. Tests import `build_app` and `make_services` from here.
"""

from __future__ import annotations

import argparse

from curation.studio import Services, Settings
from curation.ui import build_app, launch
from pool.store import Store

__all__ = ["build_app", "launch", "make_services", "main"]


def make_services(store: Store | None = None, **settings) -> Services:
    """Services on the default data dir unless a store is given; settings as keywords."""
    return Services(store=store or Store.open(), settings=Settings(**settings))


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on; a non-loopback host turns login on (default 127.0.0.1)")  # fmt: skip
    parser.add_argument("--port", type=int, default=None, help="port (default: Gradio's, 7860 or the next free one)")  # fmt: skip
    parser.add_argument("--auth", action="store_true", help="require curator login even on loopback")  # fmt: skip
    parser.add_argument("--blind", action="store_true", help="hide model names and other curators' ratings")  # fmt: skip
    parser.add_argument("--curator", default="curator", help="curator name when login is off (default: curator; ?curator=NAME in the URL also works)")  # fmt: skip
    parser.add_argument("--target", type=int, default=178, help="pool size the progress bar counts towards (default 178)")  # fmt: skip
    return parser


def main(args: argparse.Namespace) -> int:
    services = make_services(blind=args.blind, default_curator=args.curator, target=args.target)
    print(f"refpool studio on {services.store.home}", flush=True)
    _, url = launch(services, host=args.host, port=args.port, require_auth=args.auth, quiet=True,
                    prevent_thread_lock=True)  # fmt: skip
    print(f"studio running at {url}  (Ctrl+C to stop)", flush=True)
    try:
        import time

        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    raise SystemExit(main(add_arguments(argparse.ArgumentParser(description=__doc__)).parse_args()))


def __getattr__(name: str):
    # `from app import demo` (the gradio demo pattern) without opening a store at import time.
    if name == "demo":
        return build_app(make_services())
    raise AttributeError(name)
