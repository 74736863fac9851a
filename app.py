"""The refpool curation studio: `python app.py` opens it on the data directory.

    python app.py [--host 127.0.0.1] [--port 7860] [--auth] [--blind] [--curator NAME]

Data comes from $REFPOOL_HOME (default ./refpool-data). The same studio is behind
`refpool studio`. Tests import `build_app` and `make_services` from here.
"""

from __future__ import annotations

import argparse
import time

from curation.cli import studio_arguments
from curation.studio import Services, Settings
from curation.ui import build_app, launch
from pool.store import Store

__all__ = ["build_app", "launch", "make_services", "main", "studio_arguments"]


def make_services(store: Store | None = None, **settings) -> Services:
    """Services on the default data dir unless a store is given; settings as keywords."""
    return Services(store=store or Store.open(), settings=Settings(**settings))


def main(args: argparse.Namespace) -> int:
    services = make_services(blind=args.blind, default_curator=args.curator, target=args.target)
    print(f"refpool studio on {services.store.home}", flush=True)
    _, url = launch(services, host=args.host, port=args.port, require_auth=args.auth, quiet=True,
                    prevent_thread_lock=True)  # fmt: skip
    print(f"studio running at {url}  (Ctrl+C to stop)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0


def __getattr__(name: str):
    # `from app import demo` (the gradio demo pattern) without opening a store at import time.
    if name == "demo":
        return build_app(make_services())
    raise AttributeError(name)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The refpool curation studio.")
    raise SystemExit(main(studio_arguments(parser).parse_args()))
