"""The offline judge: the heuristic critic's measurements, asked the pairwise question.

No photo is involved (a policy's painting has none), so only the critic's medium and layout
scores count: watercolour (edge softness, layering, enough paint), composition (centred,
sized, off the border) and coverage. Everything it produces is labelled "heuristic": it is a
stand-in that lets the whole flow run with no key, not a model's taste.

Like a real judge with no preference, it answers "A" when the two paintings score the same,
so the both-orders rule turns a near-equal pair into a tie.
"""

from __future__ import annotations

import asyncio
import hashlib

import numpy as np

from generators.analysis import ANALYSIS_SIDE, PhotoAnalysis, Swatch
from generators.critics import heuristic_critique
from pool.reward.judge import Verdict

HEURISTIC_VERSION = 1  # bump when the score changes: stored verdicts are keyed by it
TIE_MARGIN = 0.05  # points of the 0-10 score below which two paintings count as equal
_WEIGHTS = {"watercolour": 1.0, "composition": 0.5, "coverage": 0.5}

# A photo-free analysis: a neutral swatch and an empty silhouette. The fidelity score that
# depends on it is ignored; the medium and layout scores do not read it.
_NEUTRAL = PhotoAnalysis(
    width=ANALYSIS_SIDE,
    height=ANALYSIS_SIDE,
    palette=[Swatch("#808080", 1.0, [0.6, 0.0, 0.0], "grey")],
    background=[],
    centre_colour="#808080",
    hues=[],
    mask=np.zeros((ANALYSIS_SIDE, ANALYSIS_SIDE), bool),
)


def painting_score(png: bytes) -> float:
    """A 0-10 medium score from the heuristic critic's measurements of one painting."""
    critique, _ = heuristic_critique(_NEUTRAL, png)
    total = sum(_WEIGHTS[k] * critique.scores[k] for k in _WEIGHTS)
    return round(total / sum(_WEIGHTS.values()), 3)


class HeuristicJudge:
    name = "heuristic"
    key = f"heuristic#v{HEURISTIC_VERSION}"
    heuristic = True

    def __init__(self) -> None:
        self._scores: dict[str, float] = {}

    def score(self, png: bytes) -> float:
        sha = hashlib.sha256(png).hexdigest()
        if sha not in self._scores:
            self._scores[sha] = painting_score(png)
        return self._scores[sha]

    async def verdict(self, first: bytes, second: bytes, repeat: int = 0) -> Verdict:
        # Measurements do not change when asked again: `repeat` is accepted and changes nothing.
        a, b = await asyncio.to_thread(lambda: (self.score(first), self.score(second)))
        winner = "B" if b - a > TIE_MARGIN else "A"
        return Verdict(winner, f"heuristic medium score {a:.2f} vs {b:.2f}")
