"""Text that can always be stored and printed.

Strings reach refpool from outside: a model's reply (a lone UTF-16 surrogate is valid JSON),
a sketch's error message, a file name. Python keeps a lone surrogate in a `str`, but SQLite,
UTF-8 files, JSON written with `ensure_ascii=False` and a UTF-8 terminal all refuse it. So
every string from outside passes through `repair_text` where it enters: a lone surrogate
becomes U+FFFD, and a valid pair split across two code units becomes the character it
spells. Nothing else changes.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR = re.compile("([\ud800-\udbff])([\udc00-\udfff])")


def _join_pair(match: re.Match[str]) -> str:
    high, low = ord(match[1]), ord(match[2])
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


def repair_text(text: str) -> str:
    """`text` as valid Unicode: surrogate pairs joined, lone surrogates replaced by U+FFFD."""
    if not _SURROGATE.search(text):
        return text  # the common case costs one scan
    return _SURROGATE.sub("\ufffd", _PAIR.sub(_join_pair, text))


def repair_data(value: Any) -> Any:
    """`repair_text` applied to every string (keys too) inside JSON-shaped data."""
    if isinstance(value, str):
        return repair_text(value)
    if isinstance(value, dict):
        return {repair_data(k): repair_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [repair_data(v) for v in value]
    return value
