"""What a vendor's failure means, and who caused it, read from what it said. One reader, used by
every role (coder, critic, judge).

The evidence is the reply's structure first (generators/evidence.py: its status, the error's
type / code / status / param, nested and list-shaped), then its words; the spellings are data
(refpool/core/vendor_spellings.toml, whose header gives the order). A failure `means`:

* vendor: the vendor could not answer now (an outage, a rate limit, a loading model, a reply
  broken off): retried with backoff within the model's budget, asked again on the next run;
* request: this one request is refused (a moderation filter, a context or a body too large):
  not retried, not asked again on a rerun, the model goes on;
* config: the model cannot be used as its models-file entry says (a request field or a
  structured-output mode the server refuses, images to a text-only model, a max_tokens that
  alone is the model's whole context as the server states it): the model is stopped for the
  run, naming the field to change, unless a safe adaptation exists;
* account: the account cannot pay or is not allowed (no credit, a bad key, a daily cap): the
  model is stopped for the run and asked again on the next one.

One more cause is no vendor's: `user`, a request in flight when the user stopped the run
(Ctrl-C). It is recorded as interrupted, never paid for as a reply, and asked again on a rerun.

Repetition is never evidence: an outage repeats identically by nature. Also here: how long a
server asked us to wait, in every form servers say it (0 is no advice).
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from generators.evidence import Evidence, read_evidence
from refpool.core.spellings import FailureRow, spellings

VENDOR, REQUEST, CONFIG, ACCOUNT = "vendor", "request", "config", "account"
USER = "user"  # the user stopped the run (Ctrl-C) while the request was in flight
TRANSIENT = VENDOR  # the older name: a failure that waiting cures


@dataclass(frozen=True)
class Failure:
    means: str  # vendor | request | config | account: who caused it
    kind: str  # e.g. moderation, quota, auth, rate_limit, server, interrupted
    hint: str = ""  # what the user can do
    field: str | None = None  # the models-file field to change (config)
    adapt: str | None = None  # a safe change refpool may make itself
    row: str | None = None  # the spelling row that decided it

    @property
    def scope(self) -> str:
        return self.means

    @property
    def permanent(self) -> bool:
        """Not asked again: the request (this run and the next) or the model (this run)."""
        return self.means not in (VENDOR, USER)

    @property
    def stops_model(self) -> bool:
        return self.means in (CONFIG, ACCOUNT)

    @property
    def label(self) -> str:
        """How a call's record names its failure: `means/kind/row`."""
        return f"{self.means}/{self.kind}/{self.row or '-'}"


NO_ANSWER = Failure(VENDOR, "no_answer")  # a timeout, a dropped connection
SERVER = Failure(VENDOR, "server")  # a 5xx, an unusable 200
# A reply the vendor broke off (finish_reason error, network_error, insufficient_system_resource,
# a stream with no end): retried, never kept as the model's answer.
INTERRUPTED = Failure(
    VENDOR, "interrupted", "the vendor broke the reply off; it is asked again, unpaid"
)
STOPPED_BY_USER = Failure(
    USER,
    "interrupted",
    "the run was stopped (Ctrl-C) while the request was in flight; a rerun asks it again",
)
CONTEXT_CUT = Failure(
    VENDOR,
    "context_window",
    "the context window ran out mid-reply: lower max_tokens, or use a model with a longer context",
    field="max_tokens",
)


# A context refusal is the entry's, not the request's, when the entry's max_tokens alone is
# the model's whole context as the server states it: no request of that entry can fit.
MAX_TOKENS_OVER_CONTEXT = Failure(
    CONFIG,
    "context_length",
    "max_tokens alone is the model's whole context, so no request fits: lower max_tokens"
    " (or serve the model with a longer context)",
    field="max_tokens",
    row="max-tokens-over-context",
)


def _failure(row: FailureRow) -> Failure:
    return Failure(row.means, row.kind, row.hint, row.field, row.adapt, row.id)


def _matches(globs: tuple[str, ...], values: set[str]) -> bool:
    return any(fnmatchcase(value, glob) for glob in globs for value in values)


def read_failure(
    status: int | None,
    body: str | bytes | Evidence | None,
    *,
    has_images: bool = False,
    max_tokens: int | None = None,
) -> Failure:
    """The meaning of a failed call: `status` (None: no HTTP answer), the server's body and,
    when known, the `max_tokens` the request asked for."""
    if status is None:
        return NO_ANSWER
    found = body if isinstance(body, Evidence) else read_evidence(body)
    failure = _read(status, found, has_images)
    context = min([*found.context_sizes, *_said_context(found)], default=None)
    if failure.kind == "context_length" and failure.means == REQUEST and max_tokens and context:
        return MAX_TOKENS_OVER_CONTEXT if max_tokens >= context else failure
    return failure


def _read(status: int, found: Evidence, has_images: bool) -> Failure:
    rows = [r for r in spellings().failures if r.needs != "images" or has_images]
    for row in rows:
        if row.definitive and status in row.statuses:
            return _failure(row)
    best, best_score = None, 0
    for row in rows:
        if not row.structured or (row.statuses and status not in row.statuses):
            continue
        if row.codes and not _matches(row.codes, found.tokens):
            continue
        if row.params and not _matches(row.params, found.params):
            continue
        score = bool(row.codes) + bool(row.params) + bool(row.statuses)
        if score > best_score:
            best, best_score = row, score
    if best is not None:
        return _failure(best)
    text = found.text
    for row in rows:
        fits = row.phrases and (not row.statuses or status in row.statuses)
        if fits and any(p.search(text) for p in row.phrases):
            return _failure(row)
    for row in rows:
        if not row.structured and not row.phrases and status in row.statuses:
            return _failure(row)
    return SERVER


def classify_failure(status: int | None, said: str | None, has_images: bool = False) -> Failure:
    """`read_failure` for a failure known only by its text (a stored call's error)."""
    text = (said or "").strip()
    if text.startswith("HTTP ") and ": " in text:  # "HTTP 400: {body}", as calls record it
        text = text.split(": ", 1)[1]
    if status is None and text:
        status = 500  # a recorded failure with text but no status: the server's own words
    return read_failure(status, text, has_images=has_images)


def from_label(label: str | None) -> Failure | None:
    """The Failure a call's record names (`means/kind/row`), with its row's hint."""
    if not label or label.count("/") < 2:
        return None
    means, kind, row_id = label.split("/", 2)
    for row in spellings().failures:
        if row.id == row_id:
            return _failure(row)
    fixed = (NO_ANSWER, SERVER, INTERRUPTED, STOPPED_BY_USER, CONTEXT_CUT, MAX_TOKENS_OVER_CONTEXT)
    known = {f.label: f for f in fixed}
    return known.get(label, Failure(means, kind, row=None if row_id == "-" else row_id))


# -- how long a server asked us to wait ---------------------------------------------------------
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def _unit_s(unit: str | None) -> float:
    """Seconds in one unit as servers write it: s, sec, seconds, ms, min, minutes, h, 秒 ..."""
    word = (unit or "s").lower()
    if word.startswith("ms") or word.startswith("mil"):
        return 0.001
    if word in ("m", "分钟") or word.startswith("min"):
        return 60.0
    if word.startswith("h") or word == "小时":
        return 3600.0
    return 1.0


def duration_s(value: str | None) -> float | None:
    """Seconds in a duration such as `1m30s`, `6s`, `250ms` or a bare number of seconds."""
    if value is None or not value.strip():
        return None
    value = value.strip().lower()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", value)
    if not parts or "".join(n + u for n, u in parts) != value.replace(" ", ""):
        return None
    return sum(float(n) * _UNIT_S[u] for n, u in parts)


def _advice(seconds: float | None) -> float | None:
    """A stated wait, or None: 0 (or less) is no advice, not an order to hammer."""
    return seconds if seconds is not None and seconds > 0 else None


def retry_after_s(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP-date (0: None)."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return _advice(seconds) if seconds == seconds else None  # NaN: ignore


def _reset_s(value: str | None, now: float) -> float | None:
    """x-ratelimit-reset-*: a duration (OpenAI: `1m30s`), or an epoch time in s or ms."""
    seconds = duration_s(value)
    if seconds is not None and seconds > 1e12:  # epoch milliseconds (OpenRouter)
        return _advice(seconds / 1000 - now)
    if seconds is not None and seconds > 1e9:  # epoch seconds
        return _advice(seconds - now)
    return _advice(seconds)


def _spent(remaining: str | None) -> bool | None:
    """Is this budget spent? None: the server did not say."""
    if remaining is None or not remaining.strip():
        return None
    try:
        return float(remaining) <= 0
    except ValueError:
        return None


def _header_waits(headers: Mapping[str, str], now: float) -> list[float | None]:
    get = {k.lower(): v for k, v in headers.items()}.get
    ms = duration_s(get("retry-after-ms"))
    waits = [retry_after_s(get("retry-after"), now), _advice(ms / 1000 if ms else None)]
    budgets = ("requests", "tokens")
    spent = {b: _spent(get(f"x-ratelimit-remaining-{b}")) for b in budgets}
    resets = {b: _reset_s(get(f"x-ratelimit-reset-{b}"), now) for b in budgets}
    if any(spent.values()):  # only the budget that ran out says how long to wait
        waits += [resets[b] for b in budgets if spent[b]]
    elif all(s is None for s in spent.values()):  # nothing said what ran out: the soonest
        known = [r for r in resets.values() if r is not None]
        waits.append(min(known) if known else None)
    if _spent(get("x-ratelimit-remaining")) is not False:
        waits.append(_reset_s(get("x-ratelimit-reset"), now))
    return waits


def _said_waits(found: Evidence) -> list[float | None]:
    waits: list[float | None] = list(found.waits)
    text = found.text
    for row in spellings().waits:
        for match in row.pattern.finditer(text):
            waits.append(_advice(float(match.group(1)) * _unit_s(match.group(2))))
    return waits


def _said_context(found: Evidence) -> list[int]:
    """The context sizes the server's words state (the spellings table's context_size rows)."""
    rows = spellings().context_sizes
    return [int(m.group(1)) for row in rows for m in row.pattern.finditer(found.text)]


def server_wait_s(
    headers: Mapping[str, str],
    body: str | bytes | Evidence | None,
    now: float | None = None,
) -> float | None:
    """The longest wait the server asked for, in any form (None if it gave no advice):
    Retry-After (seconds or a date), retry-after-ms, the x-ratelimit reset of a budget that
    ran out, RetryInfo's retryDelay, `estimated_time`, or words ("please retry in 9.0s")."""
    now = time.time() if now is None else now
    found = body if isinstance(body, Evidence) else read_evidence(body)
    waits = [w for w in _header_waits(headers, now) + _said_waits(found) if w is not None]
    return max(waits) if waits else None


def explain_wait(seconds: float, now: float | None = None) -> str:
    """`in 5 h 12 min (at 14:32 UTC)`: when a stated reset comes."""
    when = time.gmtime((time.time() if now is None else now) + seconds)
    hours, rest = divmod(int(seconds), 3600)
    span = f"{hours} h {rest // 60} min" if hours else f"{rest // 60} min {rest % 60} s"
    return f"in {span} (at {time.strftime('%Y-%m-%d %H:%M', when)} UTC)"
