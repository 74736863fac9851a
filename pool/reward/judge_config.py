"""Which judge to use: "heuristic", a models-file entry, or the first entry whose roles
include "judge".

The models file is generators' (generators/models.json, --models-file or $REFPOOL_MODELS);
a judge entry is an ordinary OpenAI-compatible model entry with `"roles": ["judge"]` and
`"accepts_images": true`, so any local VLM server can judge.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from generators import llm
from generators.modelcfg import read_models_file
from pool.reward.judge import HEURISTIC, JudgeError, PairJudge, VLMJudge
from pool.reward.judge_heuristic import HeuristicJudge
from refpool.core.store import Store

JUDGE_ROLE = "judge"


def models_data(models_file: str | Path | None = None) -> dict[str, Any]:
    """The raw models file (it holds more than the models: the `scorers` section)."""
    data, _ = read_models_file(models_file)
    return data if isinstance(data, dict) else {}


def judge_names(models_file: str | Path | None = None) -> list[str]:
    """Names of the models file entries whose `roles` include "judge", in file order."""
    return [n for n, cfg in llm.load_models(models_file).items() if JUDGE_ROLE in cfg.roles]


def make_judge(
    store: Store,
    name: str | None = None,
    models_file: str | Path | None = None,
    endpoints: llm.Endpoints | None = None,
) -> PairJudge:
    """The judge called `name`: "heuristic", a models-file entry, or a model id served by the
    judge entry's endpoint. Without a name, the first models-file entry with the judge role."""
    if name == HEURISTIC:
        return HeuristicJudge()
    models = llm.load_models(models_file)
    judges = judge_names(models_file)
    if name in models:
        cfg = models[name]
    elif judges:
        cfg = models[judges[0]]
        if name:  # a model id, e.g. a bigger VLM on the same router
            cfg = dataclasses.replace(cfg, name=name, model=name)
    else:
        raise JudgeError(
            f"no judge {name or ''!r} in the models file and no entry with"
            ' "roles": ["judge"]; add one to your own models file (any OpenAI-compatible'
            " vision endpoint, with accepts_images: true) or use the heuristic judge",
            hint=("choose a judge", "choose a models file"),
        )
    try:
        cfg.api_key()
    except RuntimeError:
        raise JudgeError(
            f"judge {cfg.name!r} needs an API key in ${cfg.key_env}; export it, use your own"
            " models file with your own vision endpoint, or use the heuristic judge (offline,"
            " labelled heuristic)",
            hint=("choose a models file", "choose a judge"),
        ) from None
    return VLMJudge(store, cfg, endpoints)
