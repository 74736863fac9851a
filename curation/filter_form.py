"""The queue-filter controls as plain data: what each dropdown offers and shows.

Choices name curators, photos and models, so they are never built into the page (Gradio
ships a page's component config before login): the studio fills them per session, after
login, from `filter_form`, and again whenever the filters are applied or opened, so they
stay current. The values are the curator's stored filters, so a reload shows them and
"Apply" keeps them. Blind mode offers no model, final-tier, "rated by" or ladder choice at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from curation import queue as q
from curation.ratings import live_ratings
from curation.studio import Services, clean_filters
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
