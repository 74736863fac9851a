"""The queue-filter controls as plain data: what each dropdown offers and shows.

Choices name curators, photos and models, so they are never built into the page (Gradio
ships a page's component config before login): the studio fills them per session, after
login, from `filter_form`, and again whenever the filters are applied or opened, so they
stay current. The values are the curator's stored filters, so a reload shows them and
"Apply" keeps them. Blind mode offers no model, final-tier, "rated by" or ladder choice at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from curation import queue as q
from curation.ratings import live_ratings
from curation.refine import GATES, MODEL_SORTS, SORTS
from curation.service import Services, clean_filters
from refpool.core.errors import InputError
from refpool.core.store import candidates
from refpool.core.store.photos import list_photos

ANY = "(any)"


@dataclass
class FilterForm:
    photo: list[str]
    model: list[str]
    round: list[str]
    tier: list[str]
    rated_by: list[str]
    ladder: list[str] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)  # control -> the value to show
    unrated_only: bool = False
    disagreements: bool = False


def photo_label(photo_id: int, file_name: str) -> str:
    return f"{photo_id}: {file_name}"


def filter_form(services: Services, curator: str) -> FilterForm:
    """Current choices and this curator's stored filters (blinded in blind mode)."""
    store, blind = services.store, services.settings.blind
    _, f = q.load_session(store, curator)
    f = clean_filters(services, f)
    photos = {p.id: photo_label(p.id, p.file_name) for p in list_photos(store)}
    raters = sorted({c for votes in live_ratings(store).values() for c in votes})
    form = FilterForm(
        photo=[ANY, *photos.values()],
        model=[ANY] if blind else [ANY, *candidates.generators(store)],
        round=[ANY, *(str(r) for r in candidates.rounds(store))],
        tier=[ANY] if blind else [ANY, *q.TIER_FILTERS],
        rated_by=[ANY] if blind else [ANY, *raters],
        ladder=[ANY] if blind else [ANY, *q.LADDER_FILTERS],
        unrated_only=f.unrated_only,
        disagreements=f.disagreements,
    )
    shown = {
        "photo": photos.get(f.photo_id) if f.photo_id is not None else None,
        "model": f.generator,
        "round": str(f.round) if f.round is not None else None,
        "tier": f.tier,
        "rated_by": f.curator,
        "ladder": f.ladder,
    }
    for control, value in shown.items():
        options: list[str] = getattr(form, control)
        if value and value not in options:
            options.append(value)  # a stored filter that matches nothing any more still shows
        form.values[control] = value or ANY
    return form


def parse_form(
    photo: str | None,
    model: str | None,
    round_: str | None,
    tier: str | None,
    rated_by: str | None,
    ladder: str | None,
    unrated_only: bool,
    disagreements: bool,
) -> q.Filters:
    """The dropdowns' values as Filters; ValueError names a value that is not a choice."""

    def pick(value: str | None) -> str | None:
        return None if value in (None, "", ANY) else str(value)

    photo_id = None
    if pick(photo):
        head = str(photo).split(":", 1)[0].strip()
        if not head.isdigit():
            raise InputError(f"not a photo choice: {photo!r}; pick one from the list")
        photo_id = int(head)
    round_text = pick(round_)
    if round_text is not None and not round_text.isdigit():
        raise InputError(f"not a round: {round_!r}; pick one from the list")
    return q.Filters(
        photo_id=photo_id,
        generator=pick(model),
        round=int(round_text) if round_text is not None else None,
        tier=pick(tier),
        curator=pick(rated_by),
        unrated_only=bool(unrated_only),
        disagreements=bool(disagreements),
        ladder=pick(ladder),
    ).validate()


# -- search, sort and the measurement filters (curation/refine.py) ---------------------------
MEASURES = ("note_text", "gate", "coverage_min", "coverage_max", "critic_min", "win_min", "sort")
_BOUNDS = {"coverage_min": 1.0, "coverage_max": 1.0, "critic_min": 10.0, "win_min": 1.0}


def sort_choices(blind: bool) -> list[str]:
    """What the sort dropdown offers: a blind curator only sorts by what the painting measured."""
    return [ANY, *(name for name in SORTS if not (blind and name in MODEL_SORTS))]


def gate_choices() -> list[str]:
    return [ANY, *GATES]


def measure_values(f: q.Filters) -> list[Any]:
    """The measurement controls' values, in MEASURES order (dropdowns show ANY for none)."""
    return [
        f.note_text or "",
        f.gate or ANY,
        f.coverage_min,
        f.coverage_max,
        f.critic_min,
        f.win_min,
        f.sort or ANY,
    ]


def parse_measures(*values: Any) -> dict[str, Any]:
    """The measurement controls' values (MEASURES order) as Filters fields."""
    raw = dict(zip(MEASURES, values, strict=False))
    out: dict[str, Any] = {"note_text": str(raw.get("note_text") or "").strip() or None}
    for name in ("gate", "sort"):
        out[name] = None if raw.get(name) in (None, "", ANY) else str(raw[name])
    for name, top in _BOUNDS.items():
        value = raw.get(name)
        if value is None or value == "":
            out[name] = None
            continue
        number = float(value)
        if not 0.0 <= number <= top:
            label = name.replace("_", " ")
            raise InputError(f"{label} must be between 0 and {top:g}; you gave {number:g}")
        out[name] = number
    return out
