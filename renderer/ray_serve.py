"""`refpool serve-renderer --ray`: renderer replicas on Ray Serve behind one HTTP endpoint.

Each replica (`RenderReplica`) owns its own browser with `slots` pages (1 by default) and takes
at most that many renders at a time; Ray Serve's router sends each render to a free replica,
on any machine of the cluster. The ingress is the same FastAPI app as the single-machine
service (renderer/service.py: typed requests, bounded admission, /healthz, /metrics), with a
backend that calls the replicas. A replica whose browser dies fails its health check and is
replaced by Serve; a render lost with its replica is retried once on another, and reported as
an infrastructure error (HTTP 503, `infra_error`) if that fails too, never charged to the
sketch.

Ray is optional: `pip install 'refpool[ray]'`. It is imported only here, only when used.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from typing import Any

from refpool.core.contracts import Render
from refpool.core.errors import RefpoolError, RefpoolInfraError
from renderer.http_api import infra_render

APP_NAME = "refpool-renderer"
REPLICA = "RenderReplica"
ATTEMPTS = 2  # a render lost with its replica is tried once more, on another


def import_ray() -> tuple[Any, Any]:
    try:
        import ray
        from ray import serve
    except ImportError:
        raise RefpoolError(
            "Ray Serve is not installed: install refpool's Ray extra with "
            "`pip install 'refpool[ray]'` (or `pip install 'ray[serve]'`)"
        ) from None
    return ray, serve


class RayBackend:
    """The service's backend: renders go to the replicas through a Serve handle."""

    def __init__(self, handle: Any, slots: int, replicas: int, env_pixels: bool = False) -> None:
        self.handle = handle
        self.slots = slots * replicas
        self.replicas = replicas
        self.env_pixels = env_pixels

    async def start(self) -> None:
        pass  # the replicas start their browsers themselves

    async def close(self) -> None:
        pass  # Serve drains and stops the replicas

    async def health(self) -> dict[str, Any]:
        return {
            "ok": True,
            "replicas": self.replicas,
            "slots": self.slots,
            "env_pixels": self.env_pixels,
        }

    async def render(self, source: str, seed: int, profile: str | None) -> Render:
        from ray.exceptions import RayError

        lost = ""
        for _ in range(ATTEMPTS):
            try:
                result: Render = await self.handle.render.remote(source, seed, profile)
                return result
            except RayError as exc:  # the replica died (or its actor could not be reached)
                lost = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
        message = f"the render was lost with its replica {ATTEMPTS} times ({lost})"
        return infra_render(source, seed, profile, message)


def build_application(config: Any, replicas: int, queue: int, cpus: float = 1.0) -> Any:
    """The Serve application: `replicas` RenderReplicas behind the FastAPI ingress."""
    _, serve = import_ray()
    from renderer.service import LocalBackend

    @serve.deployment(
        name=REPLICA,
        num_replicas=replicas,
        max_ongoing_requests=config.slots,  # a replica takes what its pages can paint
        ray_actor_options={"num_cpus": cpus},
        health_check_period_s=2,
        health_check_timeout_s=30,
        graceful_shutdown_timeout_s=config.deadline_s * config.attempts + 10,
    )
    class RenderReplica:
        async def __init__(self) -> None:  # type: ignore[misc]  # Ray awaits async constructors
            self.backend = LocalBackend(config)
            await self.backend.start()

        async def render(self, source: str, seed: int, profile: str | None) -> Render:
            return await self.backend.render(source, seed, profile)

        async def check_health(self) -> None:
            if not (await self.backend.health())["ok"]:
                raise RuntimeError("the replica's browser is gone")

        def pid(self) -> int:
            import os

            return os.getpid()

    @serve.deployment(name="Ingress", num_replicas=1, ray_actor_options={"num_cpus": 0})
    @serve.ingress()
    class Ingress:
        def __init__(self, replica: Any) -> None:
            self.replica = replica

        def __serve_build_asgi_app__(self) -> Any:  # noqa: N807 - Serve's hook name
            from renderer.service import Limits, build_app

            backend = RayBackend(self.replica, config.slots, replicas, config.env_pixels)
            return build_app(backend, Limits(queue=queue))

    return Ingress.bind(RenderReplica.bind())  # type: ignore[attr-defined]


def start_local_cluster(num_cpus: int | None = None) -> None:
    """A one-machine Ray cluster on 127.0.0.1, owned by this process (gone when it stops)."""
    ray, _ = import_ray()
    # Ray's start-up waits ~30 s for its agents; a busy machine needs longer than that.
    os.environ.setdefault("RAY_agent_register_timeout_ms", "180000")
    os.environ.setdefault("RAY_raylet_start_wait_time_s", "180")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    for attempt in range(3):
        try:
            ray.init(
                num_cpus=num_cpus,
                include_dashboard=False,
                _node_ip_address="127.0.0.1",
                log_to_driver=False,
            )
            return
        except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception for this
            # The raylet gives its metrics agent ~30 s, which no setting raises; a loaded
            # machine's first start can miss it, the next (warm imports) rarely does.
            ray.shutdown()
            if "timed out during startup" not in str(exc) or attempt == 2:
                raise RefpoolInfraError(f"the local Ray cluster did not start: {exc}") from None


def free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def deploy(config: Any, replicas: int, host: str, port: int, queue: int) -> str:
    """Deploy on the Ray cluster this process is connected to; the endpoint's URL.

    Serve's proxy keeps the host and port it first started on: deploy again on the same.
    """
    _, serve = import_ray()
    port = port or free_port(host)
    serve.start(http_options={"host": host, "port": port})
    serve.run(build_application(config, replicas, queue), name=APP_NAME, route_prefix="/")
    return f"http://{host}:{port}"


def serve_on_ray(
    config: Any, *, replicas: int, address: str | None, host: str, port: int, limits: Any
) -> int:
    """`serve-renderer --ray`: deploy, serve until SIGTERM/SIGINT, then drain and stop."""
    ray, serve = import_ray()
    if address:
        ray.init(address=address)
    else:  # a local cluster of this machine, torn down when we stop
        start_local_cluster()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        url = deploy(config, replicas, host, port, limits.queue)
        print(
            f"renderer serving on {url}  ({replicas} Ray replicas of {config.slots} slot(s); "
            "POST /render, GET /healthz, GET /metrics)",
            flush=True,
        )
        stop.wait()
    finally:
        serve.shutdown()  # replicas finish the renders in flight first
        ray.shutdown()
    return 0
