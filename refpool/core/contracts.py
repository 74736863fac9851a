"""Typed records shared by every part of refpool: renderer, generators, curation, pool.

They are plain frozen dataclasses. `from_dict` is strict: unknown fields are rejected,
so a record that crosses a boundary (HTTP, SQLite JSON, a dataset row) cannot drift.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from refpool.core.defaults import GATE_PROFILE

T = TypeVar("T")

# The tier vocabulary, spelled here only (tests/test_vocabulary.py checks): each set says
# what it is for, and every other module imports the one it means.
RATING_TIERS: tuple[str, ...] = ("love", "okay", "reject")  # what a curator can say of a painting
SKIP = "skip"  # the studio's fourth action: seen, no opinion yet (stored, but not a tier)
RATING_ACTIONS: tuple[str, ...] = (*RATING_TIERS, SKIP)  # what a Rating row may hold
POOL_TIERS: tuple[str, ...] = ("love", "okay")  # the tiers a pool holds; "reject" is a veto
RUNG = "rung"  # a reference calibrated to the policy (pool.reward.ladder), not a curator's tier
RELEASE_TIERS: tuple[str, ...] = (*POOL_TIERS, RUNG)  # a release's file-name prefixes
RatingTier = Literal["love", "okay", "reject", "skip"]  # RATING_ACTIONS, for the type checker
OPEN_LICENCES: tuple[str, ...] = ("CC0", "CC-BY", "CC-BY-SA", "PD")


class Record:
    """Mixin: JSON round trips that refuse unknown fields."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[call-overload]

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any]) -> T:
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"{cls.__name__}: unknown fields {sorted(unknown)}")
        kwargs = dict(data)
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            nested = _NESTED.get((cls.__name__, f.name))
            if nested and kwargs.get(f.name) is not None:
                value = kwargs[f.name]
                kwargs[f.name] = (
                    [nested.from_dict(v) for v in value]
                    if isinstance(value, list)
                    else nested.from_dict(value)
                )
        return cls(**kwargs)


@dataclass(frozen=True, slots=True)
class Violation(Record):
    """A gate failure with a stable code (see renderer/profiles.py for the catalogue)."""

    code: str
    message: str
    line: int | None = None


@dataclass(frozen=True, slots=True)
class GateResult(Record):
    accepted: bool
    violations: list[Violation] = field(default_factory=list)
    coverage: float | None = None
    profile: str = GATE_PROFILE


@dataclass(frozen=True, slots=True)
class Render(Record):
    """One run of one program in the shared renderer.

    `infra_error` is set only when *our* machinery failed (browser died twice, etc.);
    such a render says nothing about the program and must not be scored.
    """

    program_sha: str
    seed: int
    width: int
    height: int
    gate: GateResult
    png: bytes | None = None
    render_ms: float = 0.0  # time on a renderer slot (plus the static pass), not queueing
    console: list[str] = field(default_factory=list)
    infra_error: str | None = None
    cache_key: str = ""
    lib_versions: dict[str, str] = field(default_factory=dict)
    cached: bool = False
    queued_ms: float = 0.0  # time spent waiting for a free slot

    @property
    def accepted(self) -> bool:
        return self.infra_error is None and self.gate.accepted

    def to_dict(self) -> dict[str, Any]:  # bytes are not JSON; callers store PNGs as files
        data = dataclasses.asdict(self)
        data.pop("png")
        return data


@dataclass(frozen=True, slots=True)
class Photo(Record):
    id: int
    sha256: str
    file_name: str
    path: str
    licence: str
    author: str
    source_url: str
    width: int
    height: int
    phash: str
    subject: str = ""
    notes: str = ""
    licence_version: str = ""

    @property
    def licence_label(self) -> str:
        """The licence as credited, e.g. "CC-BY-2.0" (public domain has no version)."""
        v = self.licence_version.strip()
        return f"{self.licence}-{v}" if v and self.licence != "PD" else self.licence

    @property
    def open_licence(self) -> bool:
        return self.licence in OPEN_LICENCES

    @property
    def attributable(self) -> bool:
        return bool(self.author.strip() and self.source_url.strip())


@dataclass(frozen=True, slots=True)
class Critique(Record):
    """Structured feedback on a render against its photo. Scores are 0..10."""

    critic: str
    scores: dict[str, float]
    advice: str
    summary: str = ""


@dataclass(frozen=True, slots=True)
class ModelCall(Record):
    """Everything about one paid-for request. Never holds a key.

    Saved and read back through `refpool.core.store.model_calls`; `job_key` ties it to the round
    that paid for it, so a rerun reuses the reply instead of paying again.
    """

    model: str
    base_url: str
    purpose: str  # "coder" | "critic"
    messages: list[dict[str, Any]]
    params: dict[str, Any]
    outcome: str  # ok | no_code | truncated | empty_reasoning | refusal | http_error | timeout
    response: str | None = None
    reasoning: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float = 0.0
    cost_usd: float | None = None
    error: str | None = None
    job_key: str | None = None
    finish_reason: str | None = None  # as the server sent it: "length" means cut off
    refusal: str | None = None
    http_status: int | None = None  # the server's HTTP status (a permanent 4xx disables a critic)
    served_model: str | None = None  # the model the server said it served (a router may fall back)
    # a failed call's meaning and who caused it, `means/kind/row` (generators/vendor.py):
    # vendor, request, config or account
    failure: str | None = None
    id: int | None = None  # set once stored
    created_at: str = ""


@dataclass(frozen=True, slots=True)
class Candidate(Record):
    """One painting from one round: a program, its render and what the critic said.

    Load and save it through `refpool.core.store.candidates`; its refinement chain (parent, then
    the revisions that followed) comes from `candidates.chain`.
    """

    id: int
    photo_id: int
    generator: str  # "procedural" or a model id
    round: int
    seed: int
    program_sha: str | None
    parent_id: int | None = None
    run_id: int | None = None
    job_key: str = ""  # photo/generator/slot/round: a rerun skips finished work
    render_id: int | None = None
    accepted: bool = False
    coverage: float | None = None
    png_sha: str | None = None
    violations: list[Violation] = field(default_factory=list)
    critique: Critique | None = None
    coder_call_id: int | None = None
    critic_call_id: int | None = None
    outcome: str = "ok"
    infra_error: str | None = None
    created_at: str = ""

    @property
    def gate_codes(self) -> list[str]:
        return sorted({v.code for v in self.violations})


@dataclass(frozen=True, slots=True)
class RoundResult(Record):
    """What one round of generation hands the store: a Candidate before it has an id.

    `refpool.core.store.candidates.save_round` is the one place that maps it to columns; every
    field is written, so a redone (transient) round never keeps a stale value.
    """

    job_key: str
    run_id: int | None
    photo_id: int
    generator: str
    round: int
    seed: int
    outcome: str
    parent_id: int | None = None
    coder_call_id: int | None = None
    program_sha: str | None = None
    render_id: int | None = None
    accepted: bool = False
    coverage: float | None = None
    png_sha: str | None = None
    infra_error: str | None = None
    violations: list[Violation] = field(default_factory=list)
    critique: Critique | None = None
    critic_call_id: int | None = None

    @classmethod
    def of(cls, c: Candidate) -> RoundResult:
        """A stored round as a result again (to redo only part of it)."""
        return cls(**{f.name: getattr(c, f.name) for f in dataclasses.fields(cls)})


@dataclass(frozen=True, slots=True)
class Rating(Record):
    """One curator's rating of one candidate: a row of the append-only ratings log."""

    candidate_id: int
    curator: str
    tier: RatingTier
    note: str = ""
    source: str = "studio"  # studio | grid:<batch> | note | import
    id: int | None = None  # set once stored; the latest live row per curator wins
    created_at: str = ""


@dataclass(frozen=True, slots=True)
class PoolVersion(Record):
    version: str  # semver, e.g. "1.2.0"
    candidate_ids: list[int]
    tiers: dict[str, str]  # candidate id (as str, JSON keys) -> love|okay
    created_at: str = ""
    notes: str = ""


@dataclass(frozen=True, slots=True)
class ReleaseRow(Record):
    """One line of a release's metadata.jsonl, frozen when the version is released.

    The fields are the line's keys in its order, with its JSON types: a version's rows are
    written from these records, never re-derived from the live store.
    """

    file_name: str  # images/<tier>_<id>.png
    source_file: str  # sources/<tier>_<id>.js
    tier: str
    subject: str
    generator_model: str
    refinement_round: int
    hpsv3_mu: float | None
    paint_coverage: float | None
    gate_errors: int
    reference_photo: str
    reference_photo_licence: str
    reference_photo_attribution: str
    reference_photo_url: str
    reference_photo_licence_version: str
    reference_photo_licence_url: str
    licence: str
    licence_url: str
    attribution: str
    candidate_id: int
    parent_id: int | None
    program_source: str
    program_sha256: str
    image_sha256: str
    seed: int
    gate_profile: str
    gate_violations: str  # JSON text, as the dataset column holds it
    renderer_versions: str  # JSON text
    critique_history: str  # JSON text
    curator_ratings: list[dict[str, str]]
    hpsv3_sigma: float | None
    pool_version: str
    # last, with a default: rows frozen before it existed still load (their files lack it)
    served_model: str | None = None
    generator_name: str | None = None  # likewise: rows frozen before it lack it


def release_stem(tier: str, candidate_id: int) -> str:
    """The shared name of a released painting's PNG and program: the tier is its prefix
    (`love_000042`), which is how the RL env reads the tier; ratings files may use it too."""
    return f"{tier}_{candidate_id:06d}"


_NESTED: dict[tuple[str, str], type[Record]] = {
    ("GateResult", "violations"): Violation,
    ("Render", "gate"): GateResult,
    ("Candidate", "violations"): Violation,
    ("Candidate", "critique"): Critique,
    ("RoundResult", "violations"): Violation,
    ("RoundResult", "critique"): Critique,
}
