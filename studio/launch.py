"""The studio's web app: `build_app(services) -> gr.Blocks` composes the rating tabs
(studio/ui.py) with the Pool tab (studio/pool_tab.py); `launch` decides whether login is
needed and serves it behind the guard (studio/guard.py), on a server with bounded
connections (studio/connections.py). app.py and `refpool studio` call these.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any, cast

import gradio as gr
from starlette.middleware import Middleware

from curation.curators import list_curators
from curation.files import static_dirs
from curation.service import Services
from curation.sessions import SessionTable
from studio.connections import studio_server
from studio.exposure import CLIENT_ADDRESS, ExposureMiddleware
from studio.guard import StudioGuard
from studio.hosts import HostRules, check_trusted_proxy, is_loopback
from studio.login import LoginGuard, make_auth
from studio.pool_tab import add_pool_tab
from studio.ui import STATIC, build_studio, studio_js

__all__ = ["build_app", "launch", "plain_http_warning"]


def build_app(services: Services) -> gr.Blocks:
    """The whole studio: Rate, Grid and Agreement tabs, then the Pool tab."""
    return build_studio(services, extra_tabs=[add_pool_tab])


@contextlib.contextmanager
def forwarded_headers_from(proxies: Sequence[str]) -> Iterator[None]:
    """While Gradio builds its uvicorn server: believe X-Forwarded-For/-Proto only from
    `proxies`. uvicorn's own default trusts any loopback peer, so every local process (or a
    page's request through a local proxy) could choose the address the login limits see.
    uvicorn reads this setting only from FORWARDED_ALLOW_IPS when Gradio creates it."""
    before = os.environ.get("FORWARDED_ALLOW_IPS")
    os.environ["FORWARDED_ALLOW_IPS"] = ",".join(proxies)  # "" trusts no one
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("FORWARDED_ALLOW_IPS", None)
        else:
            os.environ["FORWARDED_ALLOW_IPS"] = before


def launch(
    services: Services,
    host: str = "127.0.0.1",
    port: int | None = None,
    require_auth: bool = False,
    prevent_thread_lock: bool = False,
    quiet: bool = False,
    ssl_certfile: str | None = None,
    ssl_keyfile: str | None = None,
    guard: LoginGuard | None = None,
    allowed_hosts: Sequence[str] = (),
    trusted_proxies: Sequence[str] = (),
) -> tuple[gr.Blocks, str]:
    """Launch the studio; login is required when `require_auth`, the host is not loopback,
    or others reach it through a name or a proxy (`allowed_hosts`, `trusted_proxies`).

    TLS when both `ssl_certfile` and `ssl_keyfile` are given; `guard` holds the login backoff
    (a fresh one by default). The studio answers only `host` (and its loopback names) and
    `allowed_hosts`; forwarded headers count only from `trusted_proxies`. Outermost is
    studio/guard.py (same origin, only the studio's routes, visitors bounded), on a server
    with studio/connections.py's limits; sessions are curation/sessions.py's. Returns
    (demo, url).
    """
    if bool(ssl_certfile) != bool(ssl_keyfile):
        raise SystemExit("TLS needs both --ssl-certfile and --ssl-keyfile (PEM files)")
    hosts = HostRules.make(host, allowed_hosts)
    proxies = [check_trusted_proxy(p) for p in trusted_proxies]
    reached_from_outside = bool(proxies) or any(not is_loopback(h) for h in hosts.allowed)
    exposed = require_auth or not is_loopback(host) or reached_from_outside
    if exposed:
        if not any(c["has_password"] for c in list_curators(services.store)):
            raise SystemExit(
                "the studio is exposed (non-loopback host, --auth, --trusted-proxy or a"
                " non-loopback --allowed-host) but no curator has a"
                " password: add one with `refpool curators add NAME --password-env VAR`"
            )
        services.settings.auth = True
        if not ssl_certfile and not is_loopback(host):
            print(plain_http_warning(host), file=sys.stderr, flush=True)
    guard = guard or LoginGuard()
    reports = services.store.home / "reports"
    demo = build_app(services)
    middleware = Middleware(
        ExposureMiddleware,
        reports=reports,
        blind=services.settings.blind,
        served=static_dirs(services.store),
        hosts=hosts,
    )
    sessions = SessionTable(services.store)

    def guarded(gradio_app: Any) -> Any:
        # Gradio's login, logout and "who is this?" all go through app.tokens
        gradio_app.tokens = sessions
        return StudioGuard(gradio_app, hosts=hosts, sessions=sessions, login=exposed)

    with forwarded_headers_from(proxies), studio_server(guarded):
        _, url, _ = demo.launch(
            server_name=host,
            server_port=port,
            # an async auth callable is awaited by Gradio's login route (its type hint says sync)
            auth=cast(Any, make_auth(services.store, guard, CLIENT_ADDRESS.get))
            if exposed
            else None,
            auth_message="Log in with your refpool curator account." if exposed else None,
            prevent_thread_lock=prevent_thread_lock,
            quiet=quiet,
            js=studio_js(),
            css=(STATIC / "studio.css").read_text("utf-8"),
            footer_links=["api"],
            ssl_certfile=ssl_certfile,
            ssl_keyfile=ssl_keyfile,
            # only Gradio's start-up request to itself on this machine: the certificate names
            # the public host (or is self-signed), not the address that request uses
            ssl_verify=False,
            # a blind studio never serves reports (one built without blinding names models)
            blocked_paths=[str(reports.resolve())] if services.settings.blind else None,
            app_kwargs={"middleware": [middleware]},
        )
    return demo, url


def plain_http_warning(host: str) -> str:
    return (
        f"WARNING: the studio is exposed on {host} over plain HTTP: passwords and session"
        " cookies cross the network in clear. Pass --ssl-certfile and --ssl-keyfile, or put"
        " it behind a TLS reverse proxy and listen on 127.0.0.1 (see docs/how-to/curate-as-a-team.md)."
    )
