"""What coders and critics work on: a Job (one chain of rounds) and the round before (Previous)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from generators.analysis import PhotoAnalysis
from refpool.core.contracts import Critique, Photo, Violation
from refpool.core.defaults import ROUNDS

# Outcomes that leave a round unfinished: a rerun tries it again (critic_error: only the
# critique is redone, the program and its render are kept).
TRANSIENT = ("infra_error", "http_error", "timeout", "critic_error")


@dataclass
class Job:
    """One chain of rounds: a photo, a generator, a slot."""

    photo: Photo
    analysis: PhotoAnalysis
    photo_jpeg: bytes
    generator: str
    slot: int
    seed: int
    temperature: float | None = None
    rounds: int = ROUNDS  # the chain's length, as the revise prompt states it

    def key(self, round_: int) -> str:
        """The job key of one round: a rerun finds the round's candidate and model calls by it."""
        return (
            f"photo{self.photo.sha256[:16]}/{self.generator}/slot{self.slot}"
            f"/seed{self.seed}/round{round_}"
        )


@dataclass
class Previous:
    """What a revision starts from: the parent round."""

    round: int
    program: str | None
    png: bytes | None
    critique: Critique | None
    violations: list[Violation] = field(default_factory=list)
    measures: dict[str, Any] = field(default_factory=dict)
    accepted: bool = False
