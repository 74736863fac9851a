"""The coders and critic a batch asked for, checked before any work is paid for."""

from __future__ import annotations

from collections.abc import Sequence

from generators import llm
from generators.coders import ModelCoder, ProceduralCoder
from generators.critics import HeuristicCritic, VLMCritic
from generators.modelcfg import MissingKey, ModelsFileError
from refpool.core.errors import RefpoolError
from refpool.core.store import Store

Coder = ProceduralCoder | ModelCoder
Critic = HeuristicCritic | VLMCritic


def build(
    store: Store,
    generators: Sequence[str],
    critic: str,
    models_file: str | None,
    endpoints: llm.Endpoints,
    retry_failed: bool = False,
) -> tuple[dict[str, Coder], Critic]:
    """Fails with a clear message on a bad name, a missing key, a model used outside its
    `roles`, or a critic an earlier run saw refuse permanently (unless `retry_failed`)."""
    models: dict[str, llm.ModelConfig] | None = None
    coders: dict[str, Coder] = {}
    for name in generators:
        if name == "procedural":
            coders[name] = ProceduralCoder()
            continue
        models = models if models is not None else llm.load_models(models_file)
        if name not in models:
            raise ModelsFileError(
                f"unknown generator {name!r}; choose procedural or one of"
                f" {', '.join(sorted(models))} (from the models file: your own, $REFPOOL_MODELS"
                " or the presets)",
                hint=("choose a generator", "choose a models file"),
            )
        cfg = models[name]
        cfg.require_role("coder")
        _check_key(cfg, "choose a generator")  # fail now, with the variable's name, not mid-run
        endpoints.register(cfg)
        coders[name] = ModelCoder(cfg, endpoints)
    if critic == "heuristic":
        return coders, HeuristicCritic()
    models = models if models is not None else llm.load_models(models_file)
    if critic not in models:
        raise ModelsFileError(
            f"unknown critic {critic!r}; use heuristic or one of {', '.join(sorted(models))}",
            hint=("choose a critic", "choose a models file"),
        )
    cfg = models[critic]
    cfg.require_role("critic")
    _check_key(cfg, "choose a critic")
    if not retry_failed:
        refused = llm.permanent_refusal(store, cfg, "critic")
        if refused:
            raise RefpoolError(
                f"critic {cfg.name} ({cfg.model} at {cfg.base_url}) refused permanently in an"
                f" earlier run: {refused}. Nothing was sent this time: fix its entry in your"
                " own models file (model, base_url, extra_body, accepts_images), choose another"
                " critic, or ask it again.",
                hint=("choose a models file", "choose a critic", "retry failed"),
            )
    endpoints.register(cfg)
    return coders, VLMCritic(cfg, endpoints)


def _check_key(cfg: llm.ModelConfig, other: str) -> None:
    """A missing API key, refused before any work, with the other way out: `other` (a hint)."""
    try:
        cfg.api_key()
    except MissingKey as exc:
        raise MissingKey(exc.message, hint=(*exc.hints, other)) from None
