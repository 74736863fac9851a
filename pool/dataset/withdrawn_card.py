"""The notice a withdrawn version's card opens with, wherever the card is read from now on
(an export, the Hub's main branch): when and why, and that its files stay for whoever pinned it."""

from __future__ import annotations

from refpool.core.store.release_marks import Withdrawal


def notice(w: Withdrawal) -> str:
    """The withdrawal notice, one Markdown quote line."""
    return (
        f"> **Withdrawn on {w.withdrawn_at}: {w.reason}.** Version {w.version} stays"
        f" available at its tag v{w.version} for whoever pinned it; do not start new work on"
        " it: use a later version.\n"
    )


def withdrawn_card(card: str, w: Withdrawal) -> str:
    """`card` with the withdrawal notice after its YAML header (or first, without one)."""
    if card.startswith("---\n") and (end := card.find("\n---\n", 4)) != -1:
        cut = end + len("\n---\n")
        return card[:cut] + "\n" + notice(w) + card[cut:]
    return notice(w) + "\n" + card
