"""The one HTML escaper for every page refpool writes: the studio, the report and the card."""

from __future__ import annotations

from html import escape


def esc(value: object) -> str:
    """HTML-escape any value (None as empty), quotes included."""
    return escape("" if value is None else str(value), quote=True)
