"""The card's "As a reward signal" section, computed for the exact rows of the release.

What it says about the ladder comes from the calibration of those rows, naming every judge
that placed one (and warning when they are several: their win rates are not comparable).
What it says about agreement comes from the stored verdicts on the release's own love/okay
pairs (each curator's love against the same curator's okay, both in the release), never from
pairs drawn over the library at some other time: a pair re-rated since is not counted, and a
pair the judge never saw is counted as not measured, with the command that measures it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pool.catalog import PoolEntry
from pool.reward.judge import judge_label
from pool.reward.judge_agreement import AGREEMENT_FLOOR
from pool.reward.judge_stability import stability_card_lines
from pool.reward.ladder import RUNG_HIGH, RUNG_LOW
from refpool.core.contracts import POOL_TIERS
from refpool.core.store import Store
from refpool.core.store.calibration import LadderEntry, get_pair, ladder

AGREEMENT_COMMAND = "refpool pool judge-agreement --pool --pairs {n}"


@dataclass(frozen=True)
class JudgeShare:
    label: str
    key: str
    heuristic: bool
    references: int  # rows of the release this judge placed on the ladder


@dataclass(frozen=True)
class AgreementFacts:
    pairs: int  # the release's love/okay pairs
    measured: int  # of them, judged in both orders by this judge
    resolved: int
    love_wins: int
    ties: int

    @property
    def agreement(self) -> float | None:
        return (self.love_wins + self.ties / 2) / self.resolved if self.resolved else None


def release_pairs(entries: list[PoolEntry]) -> list[tuple[int, int]]:
    """(love id, okay id): each curator's love against their own okay, both in the release."""
    by_curator: dict[str, dict[str, list[int]]] = {}
    for e in entries:
        for curator, tier in e.votes.items():
            if tier in POOL_TIERS:
                by_curator.setdefault(curator, {t: [] for t in POOL_TIERS})[tier].append(e.id)
    return sorted({(lv, ok) for t in by_curator.values() for lv in t["love"] for ok in t["okay"]})


def judges_of(entries: dict[int, LadderEntry]) -> list[JudgeShare]:
    """The judges behind the ladder entries, most references first."""
    counts = Counter((e.judge, e.judge_key, e.heuristic) for e in entries.values())
    shares = [JudgeShare(judge_label(j, h), k, h, n) for (j, k, h), n in counts.items()]
    return sorted(shares, key=lambda s: (-s.references, s.label))


def agreement_facts(
    store: Store, key: str, entries: list[PoolEntry], pairs: list[tuple[int, int]]
) -> AgreementFacts:
    """The stored verdicts of judge `key` on exactly `pairs` (no judge is called)."""
    sha = {e.id: e.candidate.png_sha or "" for e in entries}
    verdicts = [get_pair(store, key, sha[lv], sha[ok]) for lv, ok in pairs]
    judged = [v for v in verdicts if v is not None]
    resolved = [v for v in judged if v.score is not None]
    love = sum(1 for v in resolved if v.score == 1.0)
    okay = sum(1 for v in resolved if v.score == 0.0)
    return AgreementFacts(len(pairs), len(judged), len(resolved), love, len(resolved) - love - okay)


def reward_card_lines(store: Store, entries: list[PoolEntry]) -> list[str]:
    """The section: the ladder over the release's rows, its judges, and their agreement with
    the curators on the release's own pairs, with a warning wherever a figure is weak."""
    placed = ladder(store, [e.id for e in entries])
    lines = ["", "## As a reward signal", ""]
    if not placed:
        return [
            *lines,
            "Not calibrated: no judge has compared a policy's paintings with these references"
            " (`refpool pool calibrate`), so nobody knows whether the pool gives a gradient.",
        ]
    judges = judges_of(placed)
    c = Counter(e.ladder or "unresolved" for e in placed.values())
    named = ", ".join(f"{j.label} for {j.references} of them" for j in judges)
    lines += [
        f"Judges that placed this release's references: {named}. Policy win rate against each"
        f" reference, both orders, ties 0.5: below {RUNG_LOW} a ceiling, {RUNG_LOW}–{RUNG_HIGH}"
        f" a rung, above {RUNG_HIGH} a free win.",
        "",
        "| ceiling | rung | free win | unresolved | calibrated |",
        "|---|---|---|---|---|",
        f"| {c['ceiling']} | {c['rung']} | {c['free_win']} | {c['unresolved']}"
        f" | {len(placed)} of {len(entries)} |",
    ]
    if len(judges) > 1:
        lines += [
            "",
            f"> **Warning:** the ladder mixes {len(judges)} judges ({named}): their win rates"
            " are not comparable. Calibrate every reference with one judge (`refpool pool"
            " calibrate`), then release again.",
        ]
    return lines + _agreement_lines(store, entries, judges)


def _agreement_lines(store: Store, entries: list[PoolEntry], judges: list[JudgeShare]) -> list[str]:
    pairs = release_pairs(entries)
    if not pairs:
        return [
            "",
            "Agreement with the curators: not measurable on this release (no curator rated"
            " both love and okay among its rows).",
        ]
    rerun = f"`{AGREEMENT_COMMAND.format(n=len(pairs))}` before `refpool pool release`"
    lines = []
    for judge in judges:
        f = agreement_facts(store, judge.key, entries, pairs)
        if f.agreement is None:
            lines += [
                "",
                f"> **Warning:** judge {judge.label} is unchecked on this release: none of its"
                f" {f.pairs} love/okay pairs has a verdict (agreement measured on other pairs,"
                f" or before a re-rating, does not count). Run {rerun}.",
            ]
            continue
        lines += [
            "",
            f"Judge {judge.label} prefers a curator's love over their okay in {f.agreement:.0%}"
            f" of {f.resolved} resolved pairs of this release (ties count half; 50% is chance).",
        ]
        sha = {e.id: e.candidate.png_sha or "" for e in entries}
        lines += stability_card_lines(store, judge.key, [(sha[lv], sha[ok]) for lv, ok in pairs])
        if f.agreement < AGREEMENT_FLOOR:
            lines += [
                "",
                f"> **Warning:** judge {judge.label} cannot tell the curators' love from their"
                f" okay on this release ({f.agreement:.0%}, below {AGREEMENT_FLOOR:.0%}).",
            ]
        if f.measured < f.pairs:
            lines += [
                "",
                f"> **Warning:** agreement was measured on {f.measured} of this release's"
                f" {f.pairs} love/okay pairs; the rest were judged on other pairs or before a"
                f" re-rating. Run {rerun}.",
            ]
    return lines
