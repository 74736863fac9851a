"""A painting the gate rejected is rated into the pool only on purpose.

Its program broke a rule (or failed to paint), so a love or okay for it is almost always a
slip of the key. The studio says so and records it only when the same key is pressed on the
same painting again. A reject, or a skip, needs no confirmation.
"""

from __future__ import annotations

from curation.contracts import Services
from refpool.core.contracts import POOL_TIERS, RATING_ACTIONS
from refpool.core.store import candidates


def key_for(tier: str) -> str:
    """The number key the studio binds to `tier` (1 love ... 4 skip)."""
    return str(RATING_ACTIONS.index(tier) + 1)


def gate_confirm(services: Services, curator: str, candidate_id: int, tier: str) -> str:
    """'' when the rating may be recorded now; else what to ask the curator."""
    pending = services.to_confirm.pop(curator, None)
    if tier not in POOL_TIERS:
        return ""
    candidate = candidates.get(services.store, candidate_id)
    if candidate is None or candidate.accepted:
        return ""
    if pending == (candidate_id, tier):
        return ""  # the same key again, on the same painting: the curator means it
    services.to_confirm[curator] = (candidate_id, tier)
    # a blind curator is told the verdict, not the program's rules (they quote its code)
    rules = sorted({v.code for v in candidate.violations})
    why = "" if services.settings.blind or not rules else f" ({', '.join(rules)})"
    return (
        f"Not saved yet: #{candidate_id} was rejected by the gate{why}, so it cannot enter the"
        f" pool as {tier}. Press {key_for(tier)} again to record {tier} anyway, or"
        f" {key_for('reject')} to reject it."
    )
