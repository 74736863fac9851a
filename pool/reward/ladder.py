"""Calibration: sort candidates into a ladder by how often the policy already beats them.

A reference gives an RL policy a gradient only if the policy sometimes wins against it and
sometimes loses. So the judge compares what the policy actually painted with each candidate,
in both orders, and the policy's mean score against a candidate puts it on the ladder:
  below 0.25   a ceiling  (the policy nearly always loses: every rollout scores the same)
  0.25 - 0.75  a rung     (worth sampling: the comparison is still open)
  above 0.75   a free win (the policy nearly always wins: again no signal)

Paintings are picked evenly across their paint coverage (a fair, stable cross-section), after
dropping those the gate would zero. Without a folder of policy paintings, refpool's own round-0
candidates stand in for the policy, and the result says so.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pool.reward.judge import PairJudge, judge_label
from pool.reward.judge_reasons import unresolved_entry, unresolved_lines
from pool.reward.verdict_progress import VerdictProgress, judge_counted
from refpool.core.defaults import GATE_PROFILE
from refpool.core.errors import RefpoolError
from refpool.core.store import Store, candidates, sha256_bytes
from refpool.core.store.calibration import LadderEntry, ladder_classes, save_ladder_entry
from renderer.gate import measure_coverage
from renderer.profiles import get_profile

RUNG_LOW, RUNG_HIGH = 0.25, 0.75
LADDER_CLASSES = ("ceiling", "rung", "free_win")
STAND_IN = "stand-in: refpool's round-0 candidates (no --paintings given)"
NO_RUNG = (
    "No rung: every candidate is decided before the comparison runs, so the judge gives every"
    " rollout the same score and GRPO has no advantage to learn from. {advice}"
)


class CalibrationError(RefpoolError, ValueError):
    """Nothing to calibrate with; the message says what to supply."""


def ladder_class(win_rate: float | None) -> str | None:
    """ceiling (< 0.25), rung (0.25-0.75), free_win (> 0.75); None when nothing resolved."""
    if win_rate is None:
        return None
    if win_rate < RUNG_LOW:
        return "ceiling"
    return "free_win" if win_rate > RUNG_HIGH else "rung"


@dataclass(frozen=True)
class Painting:
    label: str  # file name, or "candidate <id>" for the stand-in
    png: bytes = field(repr=False)
    coverage: float
    candidate_id: int | None = None

    @property
    def sha(self) -> str:
        return sha256_bytes(self.png)


def spread_by_coverage(paintings: list[Painting], n: int) -> list[Painting]:
    """`n` paintings evenly spaced over the coverage range, ends included (all if fewer)."""
    ranked = sorted(paintings, key=lambda p: (p.coverage, p.label))
    if n <= 0 or len(ranked) <= n:
        return ranked
    if n == 1:
        return [ranked[len(ranked) // 2]]
    step = (len(ranked) - 1) / (n - 1)
    return [ranked[round(i * step)] for i in range(n)]


def gate_floor() -> float:
    return get_profile(GATE_PROFILE).min_coverage


def folder_paintings(folder: str | Path) -> list[Painting]:
    """Every PNG in a folder (not recursive), with its paint coverage."""
    path = Path(folder)
    if not path.is_dir():
        raise CalibrationError(
            f"no folder {folder} for the policy's paintings (give a folder of PNGs)",
            hint="give paintings",
        )
    found = []
    for file in sorted(path.glob("*.png")):
        data = file.read_bytes()
        try:
            cov = measure_coverage(data)
        except OSError as exc:
            raise CalibrationError(f"{file} is not a readable PNG ({exc}); remove it") from None
        found.append(Painting(file.name, data, cov))
    if not found:
        raise CalibrationError(
            f"the paintings folder {folder} holds no .png files", hint="give paintings"
        )
    return found


def stand_in_paintings(store: Store) -> list[Painting]:
    """Round-0 accepted candidates: what a policy with no refinement would paint."""
    out = []
    for c in candidates.list_candidates(store, accepted=True, round=0):
        if c.png_sha and store.png_path(c.png_sha).exists():
            png = store.png_path(c.png_sha).read_bytes()
            cov = c.coverage if c.coverage is not None else measure_coverage(png)
            out.append(Painting(f"candidate {c.id}", png, cov, c.id))
    if not out:
        raise CalibrationError(
            "no paintings given and no accepted round-0 candidates to stand in for the policy;"
            " run `refpool generate` or give a folder of a policy's paintings (PNGs from an RL"
            " run)",
            hint="give paintings",
        )
    return out


def choose_paintings(paintings: list[Painting], samples: int) -> tuple[list[Painting], list[str]]:
    """(the sample, labels dropped because the gate would zero them)."""
    floor = gate_floor()
    dropped = [p.label for p in paintings if p.coverage < floor]
    kept = [p for p in paintings if p.coverage >= floor]
    if not kept:
        raise CalibrationError(
            f"every painting has paint coverage below the gate's floor ({floor}): the gate"
            " would zero them all, so there is nothing to compare",
            hint="give paintings",
        )
    return spread_by_coverage(kept, samples), dropped


@dataclass
class CalibrationResult:
    judge: str
    heuristic: bool
    policy: str
    paintings: list[dict[str, Any]]
    dropped: list[str]
    entries: list[LadderEntry]
    # pairs with no verdict in an order, each with its reasons (judge_reasons.unresolved_entry)
    unresolved_pairs: list[dict[str, Any]] = field(default_factory=list)
    pairs_judged: int = 0  # pairs the judge was asked about (resolved or not)

    @property
    def resolved_nothing(self) -> bool:
        """The judge was asked about pairs and resolved none: nothing was measured."""
        return self.pairs_judged > 0 and len(self.unresolved_pairs) == self.pairs_judged

    def counts(self) -> dict[str, int]:
        found = Counter(e.ladder or "unresolved" for e in self.entries)
        return {k: found.get(k, 0) for k in (*LADDER_CLASSES, "unresolved")}

    def advice(self) -> str | None:
        """What to do when there is no rung (None when there is one)."""
        c = self.counts()
        if c["rung"]:
            return None
        if c["ceiling"] and not c["free_win"]:
            tip = "Every candidate is a ceiling: generate weaker references (earlier rounds)."
        elif c["free_win"] and not c["ceiling"]:
            tip = "Every candidate is a free win: generate stronger references."
        else:
            tip = "Generate candidates between the ceilings and the free wins."
        return NO_RUNG.format(advice=tip)

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "heuristic": self.heuristic,
            "policy": self.policy,
            "paintings": self.paintings,
            "dropped_below_gate": self.dropped,
            "counts": self.counts(),
            "advice": self.advice(),
            "entries": [e.to_dict() for e in self.entries],
            "pairs_judged": self.pairs_judged,
            "unresolved_pairs": self.unresolved_pairs,
        }

    def summary(self) -> str:
        c = self.counts()
        label = judge_label(self.judge, self.heuristic)
        lines = [
            f"judge {label}; policy: {self.policy}; {len(self.paintings)} paintings"
            + (
                f" ({len(self.dropped)} dropped: below the gate's paint floor)"
                if self.dropped
                else ""
            ),
            f"  ceiling  (win rate < {RUNG_LOW})      {c['ceiling']:>4}",
            f"  rung     ({RUNG_LOW} to {RUNG_HIGH})        {c['rung']:>4}",
            f"  free win (win rate > {RUNG_HIGH})      {c['free_win']:>4}",
        ]
        if c["unresolved"]:
            lines.append(f"  unresolved (judge gave no verdict)  {c['unresolved']:>4}")
        advice = self.advice()
        if advice:
            lines.append(advice)
        return "\n".join(lines + unresolved_lines(self.unresolved_pairs))


async def calibrate(
    store: Store,
    judge: PairJudge,
    paintings: list[Painting],
    candidate_ids: list[int],
    policy: str,
    dropped: list[str] | None = None,
    on_entry: Callable[[LadderEntry], None] | None = None,
    progress: VerdictProgress | None = None,
) -> CalibrationResult:
    """Judge every painting against every candidate (both orders), store each ladder entry.

    Pairs are stored as they resolve and model replies by job key, so a rerun after a crash
    pays for nothing twice. A candidate is never compared with its own painting.
    """
    # kept by sha256 like every PNG a model call names, so each logged call can be looked at
    shas = [store.put_png(p.png) for p in paintings]
    # Candidates are judged together, so the judge's own limit, not one candidate's handful of
    # pairs, bounds the requests in flight; a few more candidates than the limit are open at
    # once, so the limit stays full while one candidate's last pairs finish.
    open_candidates = asyncio.Semaphore(2 * max(1, getattr(judge, "concurrency", 4)))
    unresolved: list[dict[str, Any]] = []
    judged = 0

    async def place(cid: int) -> LadderEntry | None:
        nonlocal judged
        async with open_candidates:
            cand = candidates.get(store, cid)
            if cand is None or not cand.png_sha or not store.png_path(cand.png_sha).exists():
                return None
            ref = store.png_path(cand.png_sha).read_bytes()
            opponents = [p for p in paintings if p.candidate_id != cid and p.sha != cand.png_sha]
            if progress is not None:
                progress.expect(len(opponents))
            pairs = await asyncio.gather(
                *(judge_counted(store, judge, p.png, ref, progress) for p in opponents)
            )
        judged += len(pairs)
        for painting, pair in zip(opponents, pairs, strict=True):
            if not pair.resolved:
                name = f"candidate {cid} vs {painting.label}"
                unresolved.append(
                    unresolved_entry(pair, name, candidate_id=cid, painting=painting.label)
                )
        resolved = [p for p in pairs if p.score is not None]
        rate = (
            sum(p.score for p in resolved if p.score is not None) / len(resolved)
            if resolved
            else None
        )
        entry = LadderEntry(
            candidate_id=cid,
            judge=judge.name,
            heuristic=judge.heuristic,
            win_rate=None if rate is None else round(rate, 4),
            resolved=len(resolved),
            position_bias=sum(p.position_bias for p in resolved),
            ladder=ladder_class(rate),
            policy=policy,
            paintings=tuple(shas),
            judge_key=judge.key,
        )
        save_ladder_entry(store, entry)  # as each candidate is placed: a crash keeps it
        if on_entry is not None:
            on_entry(entry)
        return entry

    placed = await asyncio.gather(*(place(cid) for cid in candidate_ids))
    entries = [e for e in placed if e is not None]
    info = [
        {"label": p.label, "sha256": p.sha, "coverage": round(p.coverage, 4)} for p in paintings
    ]
    unresolved.sort(key=lambda u: (u["candidate_id"], u["painting"]))  # stable output
    return CalibrationResult(
        judge.name, judge.heuristic, policy, info, dropped or [], entries, unresolved, judged
    )


def rung_ids(store: Store) -> list[int]:
    """Candidates whose latest calibration put them in the rung band (the `rung` tier)."""
    return sorted(cid for cid, cls in ladder_classes(store).items() if cls == "rung")


def calibrate_offline(
    store: Store, samples: int = 6, ids: list[int] | None = None
) -> CalibrationResult:
    """The whole calibration with no key and no network: the heuristic judge against the
    round-0 stand-in policy (what the demo runs), over `ids` (default: every accepted
    candidate with a render). Its numbers are labelled heuristic."""
    from pool.reward.judge_heuristic import HeuristicJudge

    chosen, dropped = choose_paintings(stand_in_paintings(store), samples)
    if ids is None:
        ids = candidates.list_ids(store, accepted=True, rendered=True)
    return asyncio.run(calibrate(store, HeuristicJudge(), chosen, ids, STAND_IN, dropped))
