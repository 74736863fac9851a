"""The diversity numbers of one selection as typed records (frozen dataclasses).

Readers use attributes (`m.vendi.hash`, `m.counts.model`), never string keys. `to_dict()`
gives the JSON that `refpool report --json` writes and downstream tools read; its keys are
the same as when the metrics were nested dicts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

Palette = list[tuple[str, float]]
Table = dict[str, dict[str, int]]  # {label: {tier: count}}


@dataclass(frozen=True)
class CoverageStats:
    """Quantiles of paint coverage, and the share inside the published love tier's range."""

    n: int
    median: float | None = None
    min: float | None = None
    max: float | None = None
    p10: float | None = None
    p90: float | None = None
    in_published_range: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Vendi:
    hash: float
    colour: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TierHue:
    entropy_bits: float
    coverage: float


@dataclass(frozen=True)
class Hue:
    histogram: list[float]
    entropy_bits: float
    max_entropy_bits: float
    coverage: float
    mean_image_entropy_bits: float | None
    saturated_share: float | None


@dataclass(frozen=True)
class Distance:
    measure: str
    threshold: float
    histogram: list[int]
    min: float | None
    median: float | None
    mean: float | None
    pairs_within_threshold: int


@dataclass(frozen=True)
class NearDuplicates:
    clusters: list[list[int]]  # candidate ids
    n_clusters: int
    n_images: int
    share_of_images: float | None


@dataclass(frozen=True)
class Counts:
    """Images per tier, model, round and photo (or their shares), most frequent first."""

    tier: dict[str, Any]
    model: dict[str, Any]
    round: dict[str, Any]
    photo: dict[str, Any]


@dataclass(frozen=True)
class TierBy:
    photo: Table
    model: Table


@dataclass(frozen=True)
class Coverage:
    stats: CoverageStats
    histogram: list[int]
    published_love: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.stats.to_dict(),
            "histogram": self.histogram,
            "published_love": self.published_love,
        }


@dataclass(frozen=True)
class TierMetrics:
    n: int
    vendi: Vendi
    hue: TierHue
    coverage: CoverageStats
    palette: Palette

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Metrics:
    label: str
    n: int
    counts: Counts
    shares: Counts
    tier_by: TierBy
    distance: Distance
    near_duplicates: NearDuplicates
    hue: Hue
    palette: Palette
    vendi: Vendi
    coverage: Coverage
    per_tier: dict[str, TierMetrics] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with the keys the report's JSON has always had."""
        out = {
            "label": self.label,
            "n": self.n,
            "counts": asdict(self.counts),
            "shares": asdict(self.shares),
            "tier_by": asdict(self.tier_by),
            "distance": asdict(self.distance),
            "near_duplicates": asdict(self.near_duplicates),
            "hue": asdict(self.hue),
            "palette": self.palette,
            "vendi": self.vendi.to_dict(),
            "coverage": self.coverage.to_dict(),
            "per_tier": {t: m.to_dict() for t, m in self.per_tier.items()},
        }
        return out
