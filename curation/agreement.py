"""Inter-curator agreement: pairwise Cohen's kappa, Fleiss' kappa, confusion matrices and
the queue of disagreements to resolve. Works on live ratings (skips are not ratings).

Kappa is None when it is undefined (no shared items, or chance agreement is already 1,
e.g. both curators gave every shared item the same single tier).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

from curation.ratings import live_ratings
from refpool.core.contracts import RATING_TIERS
from refpool.core.store import Store


def cohen_kappa(
    a: list[str], b: list[str], categories: tuple[str, ...] = RATING_TIERS
) -> float | None:
    """Cohen's kappa of two raters over the same items (parallel lists of labels)."""
    if len(a) != len(b):
        raise ValueError("cohen_kappa needs two label lists of the same length")
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[c] * cb[c] for c in set(categories) | set(ca) | set(cb)) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def fleiss_kappa(counts: list[list[int]]) -> float | None:
    """Fleiss' kappa from an items x categories table of rater counts (same raters per item)."""
    counts = [row for row in counts if sum(row) > 0]
    if not counts:
        return None
    n = sum(counts[0])
    if n < 2 or any(sum(row) != n for row in counts):
        raise ValueError("fleiss_kappa needs the same number (>= 2) of raters on every item")
    items = len(counts)
    k = len(counts[0])
    p_j = [sum(row[j] for row in counts) / (items * n) for j in range(k)]
    p_i = [(sum(c * c for c in row) - n) / (n * (n - 1)) for row in counts]
    p_bar = sum(p_i) / items
    p_e = sum(p * p for p in p_j)
    if p_e >= 1.0:
        return None
    return (p_bar - p_e) / (1.0 - p_e)


def confusion_matrix(
    a: list[str], b: list[str], categories: tuple[str, ...] = RATING_TIERS
) -> list[list[int]]:
    """rows: rater a's tier, columns: rater b's tier, in `categories` order."""
    index = {c: i for i, c in enumerate(categories)}
    matrix = [[0] * len(categories) for _ in categories]
    for x, y in zip(a, b, strict=True):
        matrix[index[x]][index[y]] += 1
    return matrix


@dataclass
class PairAgreement:
    a: str
    b: str
    shared: int
    kappa: float | None
    percent_agree: float | None
    matrix: list[list[int]]


@dataclass
class AgreementReport:
    curators: list[str]
    pairs: list[PairAgreement]
    fleiss: float | None  # over items rated by every curator (needs >= 2 curators)
    fleiss_items: int
    disagreements: list[int] = field(default_factory=list)  # candidate ids, oldest first

    def pair(self, a: str, b: str) -> PairAgreement | None:
        for p in self.pairs:
            if {p.a, p.b} == {a, b}:
                return p
        return None


def agreement_report(store: Store, curators: list[str] | None = None) -> AgreementReport:
    votes = live_ratings(store)
    names = sorted(curators or {c for v in votes.values() for c in v})
    pairs = []
    for a, b in combinations(names, 2):
        shared = sorted(i for i, v in votes.items() if a in v and b in v)
        la = [votes[i][a] for i in shared]
        lb = [votes[i][b] for i in shared]
        pairs.append(
            PairAgreement(
                a=a,
                b=b,
                shared=len(shared),
                kappa=cohen_kappa(la, lb),
                percent_agree=(sum(x == y for x, y in zip(la, lb, strict=True)) / len(shared))
                if shared
                else None,
                matrix=confusion_matrix(la, lb),
            )
        )
    fleiss, fleiss_items = None, 0
    if len(names) >= 2:
        table = []
        for v in votes.values():
            if all(c in v for c in names):
                tally = Counter(v[c] for c in names)
                table.append([tally[t] for t in RATING_TIERS])
        fleiss_items = len(table)
        fleiss = fleiss_kappa(table) if table else None
    return AgreementReport(
        curators=names,
        pairs=pairs,
        fleiss=fleiss,
        fleiss_items=fleiss_items,
        disagreements=disagreements(store, votes),
    )


def disagreements(store: Store, votes: dict[int, dict[str, str]] | None = None) -> list[int]:
    """Candidates whose curators gave different live tiers (to resolve by re-rating)."""
    votes = live_ratings(store) if votes is None else votes
    return sorted(i for i, v in votes.items() if len(set(v.values())) > 1)
