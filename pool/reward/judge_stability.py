"""Is the judge stable? The same pairs asked again, in both orders, `repeats` times each.

  * flip rate: of the verdicts given again (one per order per repeat) where both the first
    asking and the repeat answered, the share that named the other painting. A judge whose
    verdict flips on the same two images gives a reward that is partly noise.
  * position bias: of the judgements (both orders of one asking) that resolved, the share
    whose two orders picked the same slot: the judge followed where a painting was shown,
    not which it was. `first_slot` is the share of all verdicts that named the first image.

Each repeat is a call of its own (its job key names the repeat) stored in judge_repeats
(m017), so a rerun reuses every repeat already answered and asks only the missing ones.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass
from typing import Any

from pool.reward.judge import PairJudge, pair_score
from pool.reward.verdict_progress import VerdictProgress
from refpool.core.store import Store
from refpool.core.store.calibration import JudgedPair, get_pair
from refpool.core.store.judge_repeats import get_repeat, repeats_of, save_repeat

REPEAT_PAIRS = 8  # pairs asked again by default: 4 calls per pair per repeat


@dataclass(frozen=True)
class Stability:
    repeats: int  # times each sampled pair was asked again
    pairs: int  # pairs asked again
    comparisons: int  # verdicts given again, compared with the first asking's (same order)
    flips: int  # of them, naming the other painting
    judgements: int  # resolved askings (first and repeats) of those pairs, both orders
    same_slot: int  # of them, both orders picked the same slot
    verdicts: int  # single verdicts given, first askings and repeats
    first_slot: int  # of them, naming the image shown first

    @property
    def flip_rate(self) -> float | None:
        return round(self.flips / self.comparisons, 4) if self.comparisons else None

    @property
    def position_bias(self) -> float | None:
        return round(self.same_slot / self.judgements, 4) if self.judgements else None

    @property
    def first_slot_rate(self) -> float | None:
        return round(self.first_slot / self.verdicts, 4) if self.verdicts else None

    def to_dict(self) -> dict[str, Any]:
        rates = {
            "flip_rate": self.flip_rate,
            "position_bias": self.position_bias,
            "first_slot_rate": self.first_slot_rate,
        }
        return asdict(self) | rates

    def line(self) -> str:
        """One line for a summary or a card."""
        if self.flip_rate is None:
            return f"stability: {self.pairs} pairs asked again, none answered twice"
        bias = f"{self.position_bias:.2f}" if self.position_bias is not None else "n/a"
        first = f"{self.first_slot_rate:.2f}" if self.first_slot_rate is not None else "n/a"
        return (
            f"stability: {self.pairs} pairs asked again {self.repeats}x in both orders:"
            f" flip rate {self.flip_rate:.2f} ({self.flips} of {self.comparisons} verdicts"
            f" changed), position bias {bias} (both orders picked the same slot),"
            f" first image chosen {first}"
        )


async def ask_again(
    store: Store,
    judge: PairJudge,
    pairs: list[tuple[bytes, bytes, str, str]],  # (x png, y png, x sha, y sha), first asked
    repeats: int,
    progress: VerdictProgress | None = None,  # counts each repeat done, failed or reused
) -> Stability | None:
    """Ask each pair again `repeats` times in both orders (reusing stored repeats); None when
    there was no pair to ask."""

    async def one(x: bytes, y: bytes, x_sha: str, y_sha: str, repeat: int) -> None:
        stored = get_repeat(store, judge.key, x_sha, y_sha, repeat)
        if stored is not None and stored.resolved:
            _tell(progress, "reused")
            return
        a, b = await asyncio.gather(
            judge.verdict(x, y, repeat=repeat), judge.verdict(y, x, repeat=repeat)
        )
        pair = JudgedPair(
            judge.key,
            x_sha,
            y_sha,
            a.winner,
            b.winner,
            pair_score(a.winner, b.winner),
            tuple(c for c in (a.call_id, b.call_id) if c is not None),
        )
        save_repeat(store, pair, repeat)
        _tell(progress, "done" if pair.resolved else "failed")

    jobs = [one(*p, r) for p in pairs for r in range(1, repeats + 1)]
    if progress is not None:
        progress.expect(len(jobs))
    await asyncio.gather(*jobs)
    return stored_stability(store, judge.key, [(p[2], p[3]) for p in pairs], repeats)


def _tell(progress: VerdictProgress | None, what: str) -> None:
    if progress is not None:
        progress(what)


def stored_stability(
    store: Store, key: str, pairs: list[tuple[str, str]], repeats: int | None = None
) -> Stability | None:
    """The stability of judge `key` on `pairs` (x sha, y sha) from stored verdicts only; None
    when none of them was asked again. `repeats` limits how many repeats count."""
    flips = comparisons = judgements = same_slot = verdicts = first_slot = asked = 0
    most = 0
    for x_sha, y_sha in pairs:
        first = get_pair(store, key, x_sha, y_sha)
        again = repeats_of(store, key, x_sha, y_sha)
        again = again[:repeats] if repeats else again
        if first is None or not again:
            continue
        asked += 1
        most = max(most, len(again))
        for r in again:
            for old, new in ((first.x_first, r.x_first), (first.y_first, r.y_first)):
                if old is not None and new is not None:
                    comparisons += 1
                    flips += old != new
        for j in (first, *again):
            for slot in (j.x_first, j.y_first):
                if slot is not None:
                    verdicts += 1
                    first_slot += slot == "A"
            if j.resolved:
                judgements += 1
                same_slot += j.x_first == j.y_first
    if not asked:
        return None
    return Stability(most, asked, comparisons, flips, judgements, same_slot, verdicts, first_slot)


def stability_card_lines(store: Store, key: str, pairs: list[tuple[str, str]]) -> list[str]:
    """What a dataset card says of judge `key`'s stability on `pairs` (stored verdicts only)."""
    s = stored_stability(store, key, pairs)
    if s is None or s.flip_rate is None:
        return [
            "",
            "Its stability is not measured on this release: run `refpool pool judge-agreement"
            " --pool --repeats 2` before releasing to ask its pairs again.",
        ]
    bias = f"{s.position_bias:.0%}" if s.position_bias is not None else "n/a"
    return [
        "",
        f"Asked again about {s.pairs} of these pairs ({s.repeats}x, both orders), it changed"
        f" {s.flips} of {s.comparisons} verdicts (flip rate {s.flip_rate:.0%}); in {bias} of"
        " its resolved askings both orders picked the same slot (position bias).",
    ]
