"""Which model a server says it served, beside the one requested: a router may fall back
(requested `z-ai/glm-4.6`, served `z-ai/glm-4.5`), and that is worth saying where it shows.

Names that differ only in spelling are the same model: case, an organisation prefix
(`Qwen/Qwen3-Coder` and `qwen3-coder`), a router's `:provider` or Ollama's `:latest` suffix,
and a dated snapshot of the name requested (`gpt-4o-mini-2024-07-18` for `gpt-4o-mini`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from refpool.core.contracts import ModelCall

# a dated snapshot after the requested name: -2024-07-18, -20241022, -0613, @20240620
_SNAPSHOT = re.compile(r"[-@]\d{4}(?:-?\d{2}){0,2}$")
FALLBACK_NOTE = "a router's fallback, or the server's own name for the model"


def _bare(name: str) -> str:
    """The model's name without its organisation, router suffix or case."""
    return name.strip().lower().split(":", 1)[0].rsplit("/", 1)[-1]


def same_model(requested: str, served: str | None) -> bool:
    """Does the served name mean the requested model? (Unknown counts as the same.)"""
    if not served:
        return True
    asked, got = _bare(requested), _bare(served)
    return got == asked or (got.startswith(asked) and bool(_SNAPSHOT.fullmatch(got[len(asked) :])))


def served_elsewhere(calls: Iterable[ModelCall]) -> Counter[tuple[str, str]]:
    """(requested, served) -> replies, for answered calls a different model served."""
    return Counter(
        (call.model, call.served_model)
        for call in calls
        if call.served_model and not same_model(call.model, call.served_model)
    )


def served_line(who: str, requested: str, served: str, replies: int) -> str:
    """How a run reports it: "coder glm-4.6: 3 replies served by z-ai/glm-4.5, ..."."""
    noun = "reply" if replies == 1 else "replies"
    return (
        f"{who}: {replies} {noun} served by {served}, not {requested} as requested"
        f" ({FALLBACK_NOTE})"
    )
