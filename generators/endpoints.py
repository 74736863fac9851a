"""What a run knows about its model endpoints: concurrency limits, lazily built async clients,
models stopped for the run and why, and the request adaptations a server asked for.
"""

from __future__ import annotations

import asyncio
from typing import Any

from generators.modelcfg import ModelConfig
from refpool.core.errors import RefpoolError


class Endpoints:
    """Per-endpoint concurrency limits, clients, stopped models and adaptations, for one run.

    The limit belongs to the endpoint (its base_url): every model on it shares one semaphore,
    sized by the lowest `concurrency` among the models registered for the run (and the run's
    --concurrency).
    """

    def __init__(self, max_concurrency: int | None = None, retry_failed: bool = False) -> None:
        self.max_concurrency = max_concurrency  # a run's --concurrency caps every endpoint
        self.retry_failed = retry_failed  # ask again what an earlier run saw refused for good
        self._limits: dict[str, int] = {}
        self._sems: dict[str, asyncio.Semaphore] = {}
        self._clients: dict[tuple[str, str], Any] = {}
        self.disabled: dict[str, str] = {}  # model name -> why it was stopped for the run
        # model name -> the safe changes made to its requests (generators/vendor.py `adapt`)
        self.adaptations: dict[str, list[str]] = {}

    def register(self, cfg: ModelConfig) -> None:
        """Declare a model before the run starts, so its endpoint's limit is the minimum."""
        limit = min(cfg.concurrency, self.max_concurrency or cfg.concurrency)
        self._limits[cfg.base_url] = min(limit, self._limits.get(cfg.base_url, limit))

    def limit(self, cfg: ModelConfig) -> int:
        if cfg.base_url not in self._limits:
            self.register(cfg)
        return max(1, self._limits[cfg.base_url])

    def semaphore(self, cfg: ModelConfig) -> asyncio.Semaphore:
        if cfg.base_url not in self._sems:
            self._sems[cfg.base_url] = asyncio.Semaphore(self.limit(cfg))
        return self._sems[cfg.base_url]

    def disable(self, cfg: ModelConfig, why: str) -> None:
        self.disabled.setdefault(cfg.name, why)

    def adapted(self, cfg: ModelConfig) -> frozenset[str]:
        """The adaptations this model's requests carry in this run."""
        return frozenset(self.adaptations.get(cfg.name, ()))

    def adapt(self, cfg: ModelConfig, change: str) -> None:
        """Make `change` to every later request of this model (recorded with each call)."""
        made = self.adaptations.setdefault(cfg.name, [])
        if change not in made:
            made.append(change)

    def client(self, cfg: ModelConfig) -> Any:
        try:
            from openai import AsyncOpenAI
        except ImportError as exc:  # pragma: no cover - openai is a pinned dependency
            raise RefpoolError(
                "model endpoints need the openai package: pip install openai"
            ) from exc
        key = cfg.api_key()
        slot = (cfg.base_url, cfg.key_env or "")
        if slot not in self._clients:
            # our own retry loop records every attempt, so the client must not retry silently
            self._clients[slot] = AsyncOpenAI(api_key=key, base_url=cfg.base_url, max_retries=0)
        return self._clients[slot]

    async def close(self) -> None:
        for client in self._clients.values():
            await client.close()
        self._clients.clear()
