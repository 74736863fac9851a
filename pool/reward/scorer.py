"""Preference scorers: a reward model's opinion of each candidate, configured as data.

The models file's `scorers` section names them (generators/models.json has two examples):
  {"kind": "http", "url": ".../score", "key_env": null, "timeout_s": 120, "prompt": "..."}
      POST {"png_base64", "prompt"} -> {"mu", "sigma"}; an HPSv3 server speaks this.
  {"kind": "hpsv3", "device": "cuda", "prompt": "..."}
      the optional `hpsv3` package, in this process, on a GPU (not in the base install).
HPSv3 predicts a distribution per image, so a score is mu with its sigma. `refpool score`
stores them per candidate. Nothing is ever made up: a scorer that cannot answer is an error,
and an unscored candidate keeps null.
"""

from __future__ import annotations

import base64
import json
import math
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any, Protocol

from refpool.core.errors import RefpoolError
from refpool.core.store import Store, candidates
from refpool.core.store.calibration import PreferenceRow, preferences, save_preference
from refpool.core.store.photos import get_photos

DEFAULT_PROMPT = "a watercolour painting of a $subject"


class ScorerError(RefpoolError, RuntimeError):
    """The scorer is misconfigured or did not answer; the message says what to do."""


@dataclass(frozen=True)
class PreferenceScore:
    mu: float
    sigma: float | None


class Scorer(Protocol):
    name: str
    prompt: str  # template; $subject is the photo's subject

    def score(self, png: bytes, prompt: str) -> PreferenceScore: ...


def _number(value: Any, what: str, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ScorerError(f"{where} sent no numeric {what} ({value!r})") from None
    if not math.isfinite(number):
        raise ScorerError(f"{where} sent a non-finite {what} ({value!r})")
    return number


class HTTPScorer:
    """An HPSv3 (or compatible) endpoint: POST an image and a prompt, get mu and sigma back."""

    def __init__(
        self,
        name: str,
        url: str,
        key_env: str | None = None,
        timeout_s: float = 120.0,
        prompt: str = DEFAULT_PROMPT,
    ) -> None:
        self.name, self.url, self.key_env = name, url, key_env
        self.timeout_s, self.prompt = timeout_s, prompt

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if self.key_env:
            key = os.environ.get(self.key_env)
            if not key:
                raise ScorerError(
                    f"scorer {self.name!r} needs a key in ${self.key_env} (its key_env): export"
                    " it, or remove key_env from the scorer's entry if its server needs none"
                )
            headers["authorization"] = f"Bearer {key}"
        return headers

    def score(self, png: bytes, prompt: str) -> PreferenceScore:
        body = json.dumps({"png_base64": base64.b64encode(png).decode(), "prompt": prompt})
        request = urllib.request.Request(self.url, body.encode(), self._headers(), method="POST")
        where = f"scorer {self.name!r} at {self.url}"
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                data = json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            raise ScorerError(f"{where} answered HTTP {exc.code}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ScorerError(
                f"{where} could not be reached ({reason}): start it, or set the scorer's url"
                " in the models file to where it runs",
                hint="choose a models file",
            ) from None
        except json.JSONDecodeError:
            raise ScorerError(f"{where} did not answer JSON") from None
        if not isinstance(data, dict) or data.get("available") is False:
            detail = data.get("error") if isinstance(data, dict) else None
            raise ScorerError(f"{where} has no score to give ({detail or 'model unavailable'})")
        sigma = data.get("sigma")
        return PreferenceScore(
            _number(data.get("mu"), "mu", where),
            None if sigma is None else _number(sigma, "sigma", where),
        )


class HPSv3PackageScorer:
    """HPSv3 in this process through the optional `hpsv3` package; needs a CUDA GPU."""

    def __init__(self, name: str, device: str = "cuda", prompt: str = DEFAULT_PROMPT) -> None:
        self.name, self.device, self.prompt = name, device, prompt
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            try:
                import torch
                from hpsv3 import HPSv3RewardInferencer
            except ImportError:
                raise ScorerError(
                    "the hpsv3 scorer needs the optional hpsv3 package and PyTorch with CUDA:"
                    " pip install hpsv3 (on a GPU machine), or configure an HTTP scorer"
                ) from None
            if self.device.startswith("cuda") and not torch.cuda.is_available():
                raise ScorerError(
                    "the hpsv3 scorer needs a CUDA GPU and none is visible; run an HPSv3"
                    " endpoint on a GPU machine and configure a scorer of kind http"
                )
            self._model = HPSv3RewardInferencer(device=self.device)
        return self._model

    def score(self, png: bytes, prompt: str) -> PreferenceScore:
        model = self._load()
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "image.png"
            path.write_bytes(png)
            value = model.reward([str(path)], [prompt])[0]
        flat = value.flatten().tolist() if hasattr(value, "flatten") else list(value)
        where = f"scorer {self.name!r}"
        mu = _number(flat[0] if flat else None, "mu", where)
        return PreferenceScore(mu, _number(flat[1], "sigma", where) if len(flat) > 1 else None)


def scorer_configs(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The `scorers` section of a models file (entries starting with "_" are comments)."""
    section = data.get("scorers") or {}
    return {n: e for n, e in section.items() if not n.startswith("_") and isinstance(e, dict)}


def make_scorer(name: str, entry: dict[str, Any]) -> Scorer:
    kind = entry.get("kind")
    prompt = str(entry.get("prompt") or DEFAULT_PROMPT)
    if kind == "http":
        if not entry.get("url"):
            raise ScorerError(
                f"scorer {name!r} (kind http) needs a url: add the address it answers at to its"
                " entry in the models file's `scorers` section",
                hint="choose a models file",
            )
        return HTTPScorer(
            name,
            str(entry["url"]),
            entry.get("key_env"),
            float(entry.get("timeout_s", 120)),
            prompt,
        )
    if kind == "hpsv3":
        return HPSv3PackageScorer(name, str(entry.get("device", "cuda")), prompt)
    raise ScorerError(
        f"scorer {name!r}: unknown kind {kind!r}; set its kind in the models file to http or hpsv3",
        hint="choose a models file",
    )


def fill_prompt(template: str, subject: str) -> str:
    return Template(template).safe_substitute(subject=subject.strip() or "flower")


@dataclass
class ScoreRun:
    scorer: str
    scored: int  # new scores stored by this run
    kept: int  # already scored for the same pixels and prompt: not asked again

    def summary(self) -> str:
        return f"scorer {self.scorer}: {self.scored} candidates scored, {self.kept} already scored"


def score_candidates(
    store: Store, scorer: Scorer, ids: list[int], log: Callable[[str], None] | None = None
) -> ScoreRun:
    """Score each candidate's PNG and store hpsv3_mu/hpsv3_sigma as soon as each arrives.

    Resumable: a candidate already scored by this scorer for the same PNG and prompt is kept.
    The first failure stops the run with a ScorerError; everything stored before it stays.
    """
    done = preferences(store, scorer.name)
    cands = candidates.get_many(store, ids)
    photos = get_photos(store, {c.photo_id for c in cands.values()})
    run = ScoreRun(scorer.name, 0, 0)
    for cid in ids:
        cand = cands.get(cid)
        if cand is None or not cand.png_sha or not store.png_path(cand.png_sha).exists():
            continue
        photo = photos.get(cand.photo_id)
        prompt = fill_prompt(scorer.prompt, photo.subject if photo else "")
        old = done.get(cid)
        if old is not None and old.png_sha == cand.png_sha and old.prompt == prompt:
            run.kept += 1
            continue
        result = scorer.score(store.png_path(cand.png_sha).read_bytes(), prompt)
        save_preference(
            store, PreferenceRow(cid, scorer.name, cand.png_sha, prompt, result.mu, result.sigma)
        )
        run.scored += 1
        if log is not None:
            log(f"  candidate {cid}: mu {result.mu:+.3f} sigma {result.sigma}")
    return run
