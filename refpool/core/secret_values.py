"""The keys this process has read, so any fragment of one is scrubbed from text by value.

A vendor's 401 may echo part of a key it was sent, masked ("abcd1234****wxyz"): a key with a
vendor prefix (hf_, sk-) is caught by its shape (refpool.core.store.model_calls), but an
unprefixed one (DeepSeek, Moonshot, a vLLM --api-key) has no shape. So every key is registered
when it is read, and any run of MIN_RUN or more of its characters found in a text is redacted.
The keys live in one private set only: never in a repr, an exception or a log line.
"""

from __future__ import annotations

import re

MIN_RUN = 6  # shorter runs occur in ordinary words by chance
REDACTED = "[redacted]"
_KEYS: set[str] = set()
# mask characters a vendor puts in an echoed key, and the fragment shown beyond them
_MASK_AFTER = re.compile(r"[*•…]+[A-Za-z0-9_-]*")
_MASK_BEFORE = re.compile(r"[A-Za-z0-9_-]*[*•…]+$")


def register(value: str | None) -> None:
    """Remember a key read from the environment (too short a value is not a key)."""
    if value and len(value.strip()) >= MIN_RUN:
        _KEYS.add(value.strip())


def redact_known(text: str) -> str:
    """`text` with every run of MIN_RUN+ characters of a registered key (and the mask and
    visible tail a vendor prints beside it) replaced by [redacted]."""
    spans = sorted(span for key in _KEYS for span in _fragments(key, text))
    out, end = [], 0
    for start, stop in _merged(sorted(_with_mask(text, *span) for span in spans)):
        out.append(text[end:start] + REDACTED)
        end = stop
    return "".join(out) + text[end:]


def _fragments(key: str, text: str) -> list[tuple[int, int]]:
    """(start, end) in `text` of each MIN_RUN-character window of `key` found there; windows
    that overlap are one longer run once merged."""
    found = []
    for k in range(len(key) - MIN_RUN + 1):
        window = key[k : k + MIN_RUN]
        at = text.find(window)
        while at >= 0:
            found.append((at, at + MIN_RUN))
            at = text.find(window, at + 1)
    return found


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, stop in spans:
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], stop))
        else:
            out.append((start, stop))
    return out


def _with_mask(text: str, start: int, stop: int) -> tuple[int, int]:
    """The span widened over a mask beside it: "abcd1234****wxyz" goes whole."""
    after = _MASK_AFTER.match(text, stop)
    if after:
        stop = after.end()
    before = _MASK_BEFORE.search(text[:start])
    if before:
        start = before.start()
    return start, stop
