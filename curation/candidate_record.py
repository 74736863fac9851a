"""One candidate, whole, and the candidates list with its filters: what `refpool candidates show`
and `candidates list` print, as plain dicts (their JSON).

A candidate's record joins what several tables hold: its photo, the coder's request and reply
(model_calls), the gate's violations, its refinement chain with each round's critique, the
critic's call, and the curators' live ratings (curation.ratings, the one rule for tiers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from curation.ratings import final_tier, live_ratings
from generators.summary import list_candidates
from refpool.core.contracts import RATING_TIERS, ModelCall
from refpool.core.errors import InputError, NotFound
from refpool.core.store import Store, candidates, model_calls
from refpool.core.store.photo_corrections import withdrawn
from refpool.core.store.photos import get_photo

TIERS = (*RATING_TIERS, "unrated")
# --outcome also takes these two words, read from the gate's verdict on a coded round.
GATE_OUTCOMES = ("accepted", "rejected")


@dataclass(frozen=True)
class Filters:
    """What `candidates list` keeps; None keeps everything."""

    outcome: str | None = None  # a candidate outcome (ok, no_code, http_error...), or GATE_OUTCOMES
    violation: str | None = None  # a gate code, e.g. E_TEXT
    tier: str | None = None  # the curators' final tier, or unrated
    model: str | None = None  # generator name, or the model id asked for or served
    photo: str | None = None  # photo id or file name
    round: int | None = None

    def check(self) -> None:
        if self.tier is not None and self.tier not in TIERS:
            raise InputError(f"tier {self.tier!r} is not one of {', '.join(TIERS)}")


def list_rows(store: Store, filters: Filters = Filters()) -> list[dict[str, Any]]:
    """The candidates list's rows (generators.summary.list_candidates' keys, plus violations,
    tier and votes), keeping those every given filter matches."""
    filters.check()
    votes = live_ratings(store)
    gate = {c.id: c.gate_codes for c in candidates.list_candidates(store)}
    out = []
    for row in list_candidates(store):
        mine = votes.get(row["id"], {})
        row |= {"violations": gate.get(row["id"], []), "tier": final_tier(mine), "votes": mine}
        if _keeps(row, filters):
            out.append(row)
    return out


def _keeps(row: dict[str, Any], f: Filters) -> bool:
    if f.outcome is not None:
        if f.outcome == "accepted" and not row["accepted"]:
            return False
        coded = row["outcome"] in ("ok", "reasoning_code")
        if f.outcome == "rejected" and (row["accepted"] or not coded):
            return False
        if f.outcome not in GATE_OUTCOMES and row["outcome"] != f.outcome:
            return False
    if f.violation is not None and f.violation.upper() not in row["violations"]:
        return False
    if f.tier is not None and (row["tier"] or "unrated") != f.tier:
        return False
    if f.model is not None and f.model not in (
        row["model"],
        row["requested_model"],
        row["served_model"],
    ):
        return False
    if f.photo is not None and f.photo not in (str(row["photo_id"]), row["photo"]):
        return False
    return f.round is None or row["round"] == f.round


def show(store: Store, candidate_id: int) -> dict[str, Any]:
    """Everything about one candidate (the JSON of `candidates show --json`)."""
    c = candidates.get(store, candidate_id)
    if c is None:
        raise NotFound(
            f"candidate {candidate_id} is not in the store; see `refpool candidates list`"
        )
    photo = get_photo(store, c.photo_id)
    calls = model_calls.by_ids(store, [i for i in (c.coder_call_id, c.critic_call_id) if i])
    votes = live_ratings(store)
    chain = candidates.chain(store, c.id)
    return {
        "id": c.id,
        "outcome": c.outcome,
        "accepted": c.accepted,
        "gate": "accepted" if c.accepted else "rejected",
        "round": c.round,
        "model": c.generator,
        "seed": c.seed,
        "coverage": c.coverage,
        "infra_error": c.infra_error,
        "png": str(store.png_path(c.png_sha)) if c.png_sha else None,
        "photo": photo.to_dict() | {"withdrawn": withdrawn(store).get(photo.id)},
        "violations": [v.to_dict() for v in c.violations],
        "coder_call": _call(calls.get(c.coder_call_id or -1)),
        "program": store.program_source(c.program_sha) if c.program_sha else None,
        "critique": c.critique.to_dict() if c.critique else None,
        "critic_call": _call(calls.get(c.critic_call_id or -1)),
        "chain": [
            {
                "id": s.id,
                "round": s.round,
                "accepted": s.accepted,
                "outcome": s.outcome,
                "violations": s.gate_codes,
                "critique": s.critique.to_dict() if s.critique else None,
            }
            for s in chain
        ],
        "ratings": votes.get(c.id, {}),
        "tier": final_tier(votes.get(c.id, {})),
    }


def _call(call: ModelCall | None) -> dict[str, Any] | None:
    """A model call as shown: the request (prompt) and the reply, never a key (none is stored)."""
    if call is None:
        return None
    return {
        "id": call.id,
        "model": call.model,
        "served_model": call.served_model,
        "outcome": call.outcome,
        "prompt": call.messages,
        "params": call.params,
        "reply": call.response,
        "reasoning": call.reasoning,
        "finish_reason": call.finish_reason,
        "error": call.error,
        "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens,
        "cost_usd": call.cost_usd,
        "latency_ms": call.latency_ms,
    }
