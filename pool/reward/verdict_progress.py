"""Long judge work shows progress: a bar of verdicts done, failed and reused, and a closing
table of what the run's model calls cost, per model (tokens in and out, dollars when the
endpoint reported a price), like `refpool generate` ends with its table.

A verdict is "done" when the judge answered in both orders, "failed" when an order gave no
verdict (the run says why elsewhere), "reused" when a stored verdict answered without a call.
"""

from __future__ import annotations

import sys
from collections import Counter

from tqdm import tqdm

from pool.reward.judge import PairJudge, judge_pair
from refpool.core.contracts import ModelCall
from refpool.core.store import Store, model_calls, sha256_bytes
from refpool.core.store.calibration import JudgedPair, get_pair

OUTCOMES = ("done", "failed", "reused")


class VerdictProgress:
    """A tqdm bar on stderr counting verdicts; `expect` grows its total as work is planned."""

    def __init__(self, desc: str, enabled: bool = True) -> None:
        self.counts: Counter[str] = Counter()
        self.bar = tqdm(total=0, desc=desc, unit="pair", file=sys.stderr, disable=not enabled)

    def expect(self, n: int) -> None:
        self.bar.total = (self.bar.total or 0) + n
        self.bar.refresh()

    def __call__(self, outcome: str) -> None:
        self.counts[outcome] += 1
        self.bar.update(1)
        self.bar.set_postfix({o: self.counts[o] for o in OUTCOMES}, refresh=False)

    def close(self) -> None:
        self.bar.close()

    def line(self) -> str:
        return "verdicts: " + ", ".join(f"{self.counts[o]} {o}" for o in OUTCOMES)


async def judge_counted(
    store: Store, judge: PairJudge, x: bytes, y: bytes, progress: VerdictProgress | None
) -> JudgedPair:
    """`judge_pair`, counted on `progress` as done, failed or reused (a stored verdict)."""
    known = get_pair(store, judge.key, sha256_bytes(x), sha256_bytes(y))
    pair = await judge_pair(store, judge, x, y)
    if progress is not None:
        reused = known is not None and known.resolved
        progress("reused" if reused else "done" if pair.resolved else "failed")
    return pair


def spend_lines(store: Store, since: int, purpose: str = "judge") -> list[str]:
    """Per model: the calls this run made after call id `since`, their tokens and cost."""
    by_model: dict[str, list[ModelCall]] = {}
    for call in model_calls.made_after(store, since, purpose):
        by_model.setdefault(call.model, []).append(call)
    if not by_model:
        return [f"{purpose} calls: none made (every verdict was stored or offline)"]
    lines = [f"{'model':<40}{'calls':>6}{'tokens in':>11}{'out':>8}{'cost':>11}"]
    for model, calls in sorted(by_model.items()):
        tokens_in = sum(c.prompt_tokens or 0 for c in calls)
        tokens_out = sum(c.completion_tokens or 0 for c in calls)
        priced = [c.cost_usd for c in calls if c.cost_usd is not None]
        cost = f"${sum(priced):.4f}" if priced else "not given"
        lines.append(f"{model:<40}{len(calls):>6}{tokens_in:>11}{tokens_out:>8}{cost:>11}")
    return lines
