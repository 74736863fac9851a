"""Does the judge agree with the curators? Love against okay, in both orders.

For each curator, every painting they loved is paired with every painting they rated okay
(a sample, if there are many). The judge sees each pair in both orders:
  * agreement: the love's mean score (1 won both orders, 0.5 a tie, 0 lost both);
    0.5 means the judge cannot tell a curator's love from their okay;
  * consistency: the share of pairs whose two orders agreed (no position bias).
A pool whose judge cannot tell love from okay (agreement below AGREEMENT_FLOOR) gives the RL
policy a reward its curators would not sign: the card should warn.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Set
from dataclasses import asdict, dataclass, replace
from typing import Any

from curation.ratings import live_ratings
from pool.reward.judge import PairJudge, judge_label
from pool.reward.judge_reasons import unresolved_entry, unresolved_lines
from pool.reward.judge_stability import REPEAT_PAIRS, Stability, ask_again
from pool.reward.verdict_progress import VerdictProgress, judge_counted
from refpool.core.contracts import POOL_TIERS
from refpool.core.seeds import derive_seed
from refpool.core.store import Store, candidates
from refpool.core.store.calibration import JudgedPair, get_pair

AGREEMENT_FLOOR = 0.6  # below this the judge barely prefers love over okay
DEFAULT_PAIRS = 24  # 48 judge calls at most


@dataclass(frozen=True)
class JudgeAgreement:
    judge: str
    heuristic: bool
    pairs: int  # love/okay pairs asked about
    resolved: int  # pairs where both orders gave a verdict
    love_wins: int  # the love won in both orders
    okay_wins: int  # the okay won in both orders
    ties: int  # the orders disagreed: position bias, no real preference
    agreement: float | None  # (love_wins + ties / 2) / resolved
    consistency: float | None  # (love_wins + okay_wins) / resolved
    curators: int
    # judged pairs with no verdict in an order, each with its reasons (judge_reasons)
    unresolved_pairs: tuple[dict[str, Any], ...] = ()
    stability: Stability | None = None  # the same pairs asked again (`repeats`), if they were

    @property
    def resolved_nothing(self) -> bool:
        """The judge was asked about pairs and resolved none: nothing was measured."""
        return not self.resolved and bool(self.unresolved_pairs)

    @property
    def warning(self) -> str | None:
        """The card's warning when the judge cannot tell love from okay, else None."""
        label = judge_label(self.judge, self.heuristic)
        if not self.resolved or self.agreement is None:
            return (
                f"judge {label} is unchecked: no pair of one curator's love and okay was"
                " judged, so nobody knows whether it tells love from okay"
            )
        if self.agreement < AGREEMENT_FLOOR:
            return (
                f"judge {label} cannot tell the curators' love from their okay: it prefers the"
                f" love in {self.agreement:.0%} of {self.resolved} pairs (0.5 is chance)"
            )
        return None

    def to_dict(self) -> dict[str, Any]:
        stability = self.stability.to_dict() if self.stability else None
        return asdict(self) | {"warning": self.warning, "stability": stability}

    def summary(self) -> str:
        label = judge_label(self.judge, self.heuristic)
        if not self.resolved:
            head = f"judge {label}: no love/okay pair resolved ({self.pairs} asked)"
        else:
            head = (
                f"judge {label} vs {self.curators} curator(s): prefers love in"
                f" {self.agreement:.2f} of {self.resolved} pairs (love {self.love_wins}, okay"
                f" {self.okay_wins}, ties {self.ties}); order consistency {self.consistency:.2f}"
            )
        again = [self.stability.line()] if self.stability else []
        return "\n".join([head, *again, *unresolved_lines(list(self.unresolved_pairs))])


def love_okay_pairs(
    store: Store, max_pairs: int = DEFAULT_PAIRS, seed: int = 0, among: Set[int] | None = None
) -> tuple[list[tuple[int, int]], int]:
    """((love id, okay id) pairs taken within each curator's own ratings, curators counted);
    `among` keeps only pairs of those candidates (a draft's: the pairs its card will cite)."""
    by_curator: dict[str, dict[str, list[int]]] = {}
    for cid, votes in live_ratings(store).items():
        if among is not None and cid not in among:
            continue
        for curator, tier in votes.items():
            if tier in POOL_TIERS:
                by_curator.setdefault(curator, {t: [] for t in POOL_TIERS})[tier].append(cid)
    pairs = sorted({(lv, ok) for t in by_curator.values() for lv in t["love"] for ok in t["okay"]})
    if len(pairs) > max_pairs:
        pairs = sorted(random.Random(derive_seed(seed, "judge-agreement")).sample(pairs, max_pairs))
    return pairs, sum(1 for t in by_curator.values() if t["love"] and t["okay"])


async def judge_agreement(
    store: Store,
    judge: PairJudge,
    max_pairs: int = DEFAULT_PAIRS,
    seed: int = 0,
    cached_only: bool = False,
    among: Set[int] | None = None,
    repeats: int = 0,
    repeat_pairs: int = REPEAT_PAIRS,
    progress: VerdictProgress | None = None,
) -> JudgeAgreement:
    """Ask the judge about love/okay pairs; `cached_only` uses stored verdicts and calls no
    model (what a report or the Pool tab should do: `stored_judge_agreement`, no loop needed).
    `repeats` asks the first `repeat_pairs` resolved pairs again that many times, both orders
    (pool/reward/judge_stability.py); `progress` counts each pair done, failed or reused."""
    if cached_only:
        return stored_judge_agreement(
            store, judge.name, judge.key, judge.heuristic, max_pairs, seed
        )
    pairs, curators = love_okay_pairs(store, max_pairs, seed, among)
    rendered = [
        (ids, a, b)
        for ids, a, b in _rendered_pairs(store, pairs)
        if store.png_path(a).exists() and store.png_path(b).exists()
    ]
    pngs = {sha: store.png_path(sha).read_bytes() for _, a, b in rendered for sha in (a, b)}
    if progress is not None:
        progress.expect(len(rendered))

    judged: list[JudgedPair | None] = list(
        await asyncio.gather(
            *(judge_counted(store, judge, pngs[a], pngs[b], progress) for _, a, b in rendered)
        )
    )
    results = list(zip([ids for ids, _, _ in rendered], judged, strict=True))
    tally = _tally(judge.name, judge.heuristic, pairs, curators, results)
    if repeats <= 0:
        return tally
    again = [
        (pngs[a], pngs[b], a, b)
        for (_, a, b), r in zip(rendered, judged, strict=True)
        if r is not None and r.resolved
    ][:repeat_pairs]
    return replace(tally, stability=await ask_again(store, judge, again, repeats, progress))


def stored_judge_agreement(
    store: Store,
    name: str,
    key: str,
    heuristic: bool,
    max_pairs: int = DEFAULT_PAIRS,
    seed: int = 0,
) -> JudgeAgreement:
    """The agreement of the judge stored under `key` from its stored verdicts only: no judge
    is called and no event loop is needed (a pair it never judged counts as unresolved)."""
    pairs, curators = love_okay_pairs(store, max_pairs, seed)
    rendered = _rendered_pairs(store, pairs)
    results = [(ids, get_pair(store, key, a, b)) for ids, a, b in rendered]
    return _tally(name, heuristic, pairs, curators, results)


_Ids = tuple[int, int]  # (love id, okay id)


def _rendered_pairs(store: Store, pairs: list[_Ids]) -> list[tuple[_Ids, str, str]]:
    """((love id, okay id), love PNG sha, okay PNG sha) of the pairs whose two candidates
    both have a render."""
    found = candidates.get_many(store, {i for p in pairs for i in p})
    out = []
    for love, okay in pairs:
        a, b = found.get(love), found.get(okay)
        if a is not None and b is not None and a.png_sha and b.png_sha:
            out.append(((love, okay), a.png_sha, b.png_sha))
    return out


def _tally(
    name: str,
    heuristic: bool,
    pairs: list[tuple[int, int]],
    curators: int,
    judged: list[tuple[_Ids, JudgedPair | None]],
) -> JudgeAgreement:
    results = [r for _, r in judged]
    resolved = [r for r in results if r is not None and r.score is not None]
    unresolved = tuple(
        unresolved_entry(r, f"love {love} vs okay {okay}", love_id=love, okay_id=okay)
        for (love, okay), r in judged
        if r is not None and not r.resolved
    )
    love_wins = sum(1 for r in resolved if r.score == 1.0)
    okay_wins = sum(1 for r in resolved if r.score == 0.0)
    ties = len(resolved) - love_wins - okay_wins
    n = len(resolved)
    return JudgeAgreement(
        judge=name,
        heuristic=heuristic,
        pairs=len(pairs),
        resolved=n,
        love_wins=love_wins,
        okay_wins=okay_wins,
        ties=ties,
        agreement=round((love_wins + ties / 2) / n, 4) if n else None,
        consistency=round((love_wins + okay_wins) / n, 4) if n else None,
        curators=curators,
        unresolved_pairs=unresolved,
    )
