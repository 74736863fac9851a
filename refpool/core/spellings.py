"""Vendors' spellings as typed rows, read once from refpool/core/vendor_spellings.toml.

The TOML is the one place that knows how model servers spell a failure, a wait, a finish
reason or a refusal; this module only reads it (its header says how the rows are used).
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

MEANINGS = ("vendor", "request", "config", "account")


@dataclass(frozen=True)
class FailureRow:
    id: str
    means: str  # vendor | request | config | account
    kind: str
    fixture: dict[str, Any]  # {status, body, headers?}: a reply the row was written from
    codes: tuple[str, ...] = ()  # globs over the error's structured tokens
    params: tuple[str, ...] = ()  # globs over the request fields the error names
    statuses: frozenset[int] = frozenset()
    phrases: tuple[re.Pattern[str], ...] = ()
    definitive: bool = False  # the status says it all, whatever the body adds
    needs: str | None = None  # "images": only for a request that carried images
    field: str | None = None  # the models-file field to change
    adapt: str | None = None  # a safe change refpool may make itself
    hint: str = ""

    @property
    def structured(self) -> bool:
        return bool(self.codes or self.params)


@dataclass(frozen=True)
class PatternRow:
    """A wording read by one regular expression: a wait, a context size, a refusal."""

    id: str
    pattern: re.Pattern[str]
    fixture: Any  # wait: {text, seconds}; context size: {text, tokens}; refusal: the text


@dataclass(frozen=True)
class Spellings:
    failures: tuple[FailureRow, ...]
    waits: tuple[PatternRow, ...]
    context_sizes: tuple[PatternRow, ...]
    finish: dict[str, tuple[str, ...]]  # meaning -> spellings
    refusals: tuple[PatternRow, ...]


def _failure(row: dict[str, Any]) -> FailureRow:
    if row["means"] not in MEANINGS:
        raise ValueError(f"failure row {row['id']!r}: means must be one of {MEANINGS}")
    return FailureRow(
        id=row["id"],
        means=row["means"],
        kind=row["kind"],
        fixture=row["fixture"],
        codes=tuple(c.lower() for c in row.get("codes", ())),
        params=tuple(p.lower() for p in row.get("params", ())),
        statuses=frozenset(row.get("statuses", ())),
        phrases=tuple(re.compile(p, re.I) for p in row.get("phrases", ())),
        definitive=bool(row.get("definitive", False)),
        needs=row.get("needs"),
        field=row.get("field"),
        adapt=row.get("adapt"),
        hint=row.get("hint", ""),
    )


@functools.cache
def spellings() -> Spellings:
    """Every row of vendor_spellings.toml, checked and compiled (read once per process)."""
    text = resources.files("refpool.core").joinpath("vendor_spellings.toml").read_text("utf-8")
    data = tomllib.loads(text)
    return Spellings(
        failures=tuple(_failure(row) for row in data["failure"]),
        waits=_patterns(data["wait"]),
        context_sizes=_patterns(data["context_size"]),
        finish={meaning: tuple(names) for meaning, names in data["finish"].items()},
        refusals=_patterns(data["refusal"]),
    )


def _patterns(rows: list[dict[str, Any]]) -> tuple[PatternRow, ...]:
    return tuple(PatternRow(r["id"], re.compile(r["pattern"], re.I), r["fixture"]) for r in rows)
