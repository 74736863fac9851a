"""The big view of one candidate: render, source photo, program, ratings and its rounds.

Built from the `Candidate` and `Photo` records. Blind mode is applied here, so a `Detail`
never carries what the curator may not see: no program, no critique, no model, no ladder
(absent, not masked). The blind page is then built from a whitelist of its fields
(curation/blind_view.py). Masking (`blind_program`) is only for a reader who chooses it.
"""

from __future__ import annotations

from dataclasses import dataclass

from curation.blinding import mask_names, still_named, strip_js_comments
from curation.files import media_url, render_url, thumbnail_url
from curation.ratings import latest_rating, others_ratings
from refpool.core.contracts import Candidate, Critique, Photo, Violation
from refpool.core.store import Store, calibration, candidates
from refpool.core.store.photos import get_photos, photo_file


@dataclass
class Stage:
    """One round in a candidate's refinement chain."""

    id: int
    round: int
    accepted: bool
    thumb_url: str | None
    critique: str


@dataclass
class Detail:
    """Everything the big view shows about one candidate (already blinded if needed)."""

    id: int
    png_url: str | None
    png_problem: str | None  # why there is no image to show, and what to do
    photo_url: str | None
    photo: Photo | None
    photo_problem: str | None  # why there is no photo to show
    program: str | None
    program_note: str  # what was done to the program before showing it ("" when nothing)
    accepted: bool
    violations: list[Violation]
    coverage: float | None
    generator: str | None  # None in blind mode
    round: int
    seed: int
    my_tier: str | None
    my_note: str
    seen: int  # id of my live rating row when shown (0: none); detects other tabs
    others: dict[str, dict]  # {} in blind mode
    history: list[Stage]
    # calibration (pool ladder): the policy's win rate and its class; None if uncalibrated or
    # blind (a judge's opinion would anchor an independent rating)
    win_rate: float | None = None
    ladder: str | None = None
    ladder_judge: str = ""


def load_detail(
    store: Store, candidate_id: int, curator: str, blind: bool = False
) -> Detail | None:
    """The big view of one candidate, or None if it no longer exists."""
    candidate = candidates.get(store, candidate_id)
    if candidate is None:
        return None
    png_url, png_problem = _render(store, candidate)
    photo, photo_url, photo_problem = _photo(store, candidate.photo_id)
    mine = latest_rating(store, candidate_id, curator)
    chain = candidates.chain(store, candidate_id)
    # a coder may sign its program anywhere, in any spelling: blind mode shows none of it
    program = None if blind else _program(store, candidate.program_sha)
    program_note = "not shown in blind mode" if blind else ""
    calibrated = None if blind else calibration.ladder(store, [candidate_id]).get(candidate_id)
    return Detail(
        id=candidate_id,
        png_url=png_url,
        png_problem=png_problem,
        photo_url=photo_url,
        photo=photo,
        photo_problem=photo_problem,
        program=program,
        program_note=program_note,
        accepted=candidate.accepted,
        violations=candidate.violations,
        coverage=candidate.coverage,
        generator=None if blind else candidate.generator,
        round=candidate.round,
        seed=candidate.seed,
        my_tier=mine.tier if mine else None,
        my_note=mine.note if mine else "",
        seen=(mine.id or 0) if mine else 0,
        others={} if blind else others_ratings(store, candidate_id, curator),
        history=[] if blind else history(store, chain),
        win_rate=calibrated.win_rate if calibrated else None,
        ladder=calibrated.ladder if calibrated else None,
        ladder_judge=("heuristic judge" if calibrated.heuristic else calibrated.judge)
        if calibrated
        else "",
    )


def blind_program(program: str | None, models: list[str]) -> tuple[str | None, str]:
    """The program as blind mode shows it, and what was done to it. A program that still
    names a model once masked (say, inside a longer word) is not shown at all."""
    if program is None:
        return None, ""
    masked = mask_names(strip_js_comments(program), models)
    if still_named(masked, models):
        return None, (
            "hidden in blind mode: it spells its model's name in a way that cannot be masked"
            " without rewriting the code; rate the painting, or leave blind mode to read it"
        )
    return masked, "comments stripped and model names masked (blind mode)"


def history(store: Store, chain: list[Candidate], masked: list[str] | None = None) -> list[Stage]:
    """The refinement chain through a candidate (ancestors, itself, first revisions).

    With `masked` (blind mode) critiques lose the critic's name and those model names.
    """
    return [
        Stage(
            id=c.id,
            round=c.round,
            accepted=c.accepted,
            thumb_url=thumbnail_url(store, c.png_sha),
            critique=critique_text(c.critique)
            if masked is None
            else mask_names(critique_text(c.critique, critic=False), masked),
        )
        for c in chain
    ]


def critique_text(critique: Critique | None, critic: bool = True) -> str:
    """One line for the history strip: "critic (fidelity 6, ...) · summary · advice"
    (without the critic's name when `critic` is False)."""
    if critique is None:
        return ""
    scores = ", ".join(f"{k} {v:g}" for k, v in (critique.scores or {}).items())
    head = (critique.critic if critic else "critique") + (f" ({scores})" if scores else "")
    rest = [text for text in (critique.summary, critique.advice) if text]
    return head + (" · " + " · ".join(rest) if rest else "")


def _render(store: Store, candidate: Candidate) -> tuple[str | None, str | None]:
    """(URL of the render, None) or (None, why there is none and what to do)."""
    if not candidate.png_sha:
        return None, f"candidate {candidate.id} has no render (the program failed the gate)"
    path = store.png_path(candidate.png_sha)
    if not path.exists():
        return None, (
            f"the render's PNG is missing on disk ({path}); restore the data directory"
            " or re-render this candidate. You can still rate or skip it."
        )
    return render_url(candidate.png_sha), None


def _photo(store: Store, photo_id: int) -> tuple[Photo | None, str | None, str | None]:
    """(the photo, its URL, why it cannot be shown)."""
    photo = get_photos(store, [photo_id]).get(photo_id)
    if photo is None:
        return None, None, f"photo {photo_id} is not in the library"
    path = photo_file(store, photo)
    if not path.exists():
        return photo, None, f"photo file missing on disk ({photo.path})"
    url = media_url(store.home, path)
    if url is None:  # the studio serves photos only from its own folders, by name
        outside = f"photo file {photo.path} is outside the data directory's photos folder"
        return photo, None, outside + "; re-import it with `refpool photos import FOLDER`"
    return photo, url, None


def _program(store: Store, program_sha: str | None) -> str | None:
    if not program_sha:
        return None
    try:
        return store.program_source(program_sha)
    except OSError:  # a lost program file: the view says "program not available"
        return None
