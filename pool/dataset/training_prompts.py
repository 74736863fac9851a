"""The words of the training sets: the coder's prompt for a photo, a program in the fenced form
a model replies with, and the user turn that brings a critique back to the coder.

The prompt is the one refpool's coders are sent for a first round (generators/prompts/,
through `generators.coders.first_round_prompt`), so a policy trained on a release is asked
what the pool's own coders were asked. `TrainingOptions.system_prompt` swaps the system prompt
(the watercolour env's, say); the card names which one a release used.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from generators.analysis import analyse_path
from generators.coders import coder_system_prompt, first_round_prompt
from refpool.core.contracts import Candidate, Photo
from refpool.core.defaults import ROUNDS
from refpool.core.errors import InputError
from refpool.core.store import Store, sha256_bytes
from refpool.core.store.photos import photo_file

CODER_SYSTEM_PROMPT = "refpool's coder system prompt (generators/prompts/system.md)"
_FENCED = re.compile(r"\A```js\n(.*)\n```\Z", re.DOTALL)


@dataclass(frozen=True)
class TrainingOptions:
    """What a release's training sets hold beyond their defaults."""

    system_prompt: str | None = None  # None: refpool's coder system prompt
    system_prompt_name: str = CODER_SYSTEM_PROMPT  # what the card says it was
    sft_okay: bool = False  # `sft` also teaches the okay references' programs (else love only)
    photos: bool = False  # `sft` and `prompts` show the photo as an image (photos/ holds them)
    judge_pairs: bool = False  # `preference` adds judge-resolved pairs (training_judged.py)

    @property
    def system(self) -> str:
        return self.system_prompt if self.system_prompt is not None else coder_system_prompt()


def options_from_file(
    path: str | Path | None,
    sft_okay: bool = False,
    photos: bool = False,
    judge_pairs: bool = False,
) -> TrainingOptions:
    """Options whose system prompt is the text of `path` (None: refpool's coder prompt)."""
    if path is None:
        return TrainingOptions(sft_okay=sft_okay, photos=photos, judge_pairs=judge_pairs)
    file = Path(path)
    try:
        data = file.read_bytes()
        text = data.decode("utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(
            f"the system prompt {file} cannot be read as UTF-8 text ({exc}); give a text file",
            hint="choose a system prompt",
        ) from exc
    if not text:
        raise InputError(
            f"the system prompt {file} is empty; give the system prompt's text",
            hint="choose a system prompt",
        )
    name = f"{file.name} (sha256 {sha256_bytes(data)[:12]})"
    return TrainingOptions(text, name, sft_okay, photos, judge_pairs)


def photo_bytes(store: Store, photo: Photo) -> bytes:
    """The photo's file, or a message naming it when it is gone from the data folder."""
    path = photo_file(store, photo)
    if not path.exists():
        raise InputError(
            f"photo {photo.id} ({photo.file_name}): its file {path} is missing from the data"
            " folder, so its prompt cannot be written; restore the file and release again"
        )
    return path.read_bytes()


def coder_prompt(
    store: Store, photo: Photo, options: TrainingOptions, sees_photo: bool = False
) -> list[dict[str, Any]]:
    """[system, user]: what a coder is asked to paint `photo`. Text only (the photo's
    analysis), or with `sees_photo` in TRL's vision form: content parts, the image first."""
    photo_bytes(store, photo)  # the analysis reads it: say which photo is missing
    brief = analyse_path(str(photo_file(store, photo))).brief()
    user = first_round_prompt(photo.subject or "flower", brief, sees_photo=sees_photo)
    if not sees_photo:
        return [{"role": "system", "content": options.system}, {"role": "user", "content": user}]
    return [
        {"role": "system", "content": [{"type": "text", "text": options.system}]},
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": user}]},
    ]


def photo_path(photo: Photo) -> str:
    """Where a release that shows photos keeps this one (its id keeps names apart)."""
    return f"photos/{photo.id:06d}_{photo.file_name}"


def fenced(program: str) -> str:
    """A program as a coder's reply carries it; `unfenced` gives back the same bytes."""
    return f"```js\n{program}\n```"


def unfenced(reply: str) -> str | None:
    """The program of a `fenced` reply, byte for byte (None when `reply` is not one)."""
    m = _FENCED.match(reply)
    return m[1] if m else None


def revision_turn(candidate: Candidate, render: str, rounds: int = ROUNDS) -> str:
    """The user turn after `candidate`'s program: its gate result and its critique."""
    template = resources.files("pool.dataset").joinpath("prompts", "revision_turn.md")
    critique = candidate.critique
    violations = "\n".join(
        f"- [{v.code}] {v.message}" + (f" (line {v.line})" if v.line else "")
        for v in candidate.violations
    )
    values: dict[str, Any] = {
        "round": candidate.round + 1,
        "rounds": max(rounds, candidate.round + 2),
        "render": render,
        "gate": "accepted" if candidate.accepted else "rejected",
        "violations": violations or "(no violations)",
        "scores": json.dumps(critique.scores, sort_keys=True) if critique else "(none)",
        "advice": (critique.advice if critique else "") or "(none)",
    }
    return Template(template.read_text("utf-8")).safe_substitute(values).strip()
