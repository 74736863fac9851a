"""The refpool curation studio: `python app.py` opens it on the data directory.

    python app.py [--host 127.0.0.1] [--port 7860] [--auth] [--blind] [--curator NAME]
                  [--ssl-certfile cert.pem --ssl-keyfile key.pem]
                  [--allowed-host NAME ...] [--trusted-proxy ADDRESS ...]

The studio's web code is one package, studio/: `build_app(services) -> gr.Blocks` composes
its Rate, Grid, Agreement and Pool tabs, and `launch` decides whether login is needed and
serves it. The service layer it calls is curation/service.py. Data comes from $REFPOOL_HOME
(default ./refpool-data). The same studio is behind `refpool studio`.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import gradio as gr

from curation.cli import studio_arguments
from curation.service import Services, Settings
from refpool.core.store import Store
from studio.launch import build_app, launch, plain_http_warning

__all__ = ["build_app", "launch", "make_services", "main", "plain_http_warning", "studio_arguments"]


def make_services(store: Store | None = None, **settings: Any) -> Services:
    """Services on the default data dir unless a store is given; settings as keywords."""
    return Services(store=store or Store.open(), settings=Settings(**settings))


def main(args: argparse.Namespace) -> int:
    services = make_services(blind=args.blind, default_curator=args.curator, target=args.target)
    print(f"refpool studio on {services.store.home}", flush=True)
    _, url = launch(
        services,
        host=args.host,
        port=args.port,
        require_auth=args.auth,
        quiet=True,
        ssl_certfile=args.ssl_certfile,
        ssl_keyfile=args.ssl_keyfile,
        prevent_thread_lock=True,
        allowed_hosts=args.allowed_host,
        trusted_proxies=args.trusted_proxy,
    )
    print(f"studio running at {url}  (Ctrl+C to stop)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0


def __getattr__(name: str) -> gr.Blocks:
    # `from app import demo` (the gradio demo pattern) without opening a store at import time.
    if name == "demo":
        return build_app(make_services())
    raise AttributeError(name)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The refpool curation studio.")
    raise SystemExit(main(studio_arguments(parser).parse_args()))
