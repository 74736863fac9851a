"""The service's counters, written as Prometheus text (exposition format 0.0.4) by hand."""

from __future__ import annotations

from dataclasses import dataclass, field

from refpool.core.contracts import Render

# Seconds: an empty sketch takes ~0.1 s, the reference paintings 2-40 s, the deadline is 30 s.
BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0)
OUTCOMES = ("accepted", "rejected", "infra_error")


def outcome_of(result: Render) -> str:
    if result.infra_error:
        return "infra_error"
    return "accepted" if result.accepted else "rejected"


@dataclass
class Metrics:
    slots: int
    admitted: int = 0  # renders admitted and not yet answered (on a slot or waiting for one)
    refused: int = 0  # renders refused because the queue was full
    renders: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    cache_hits: int = 0
    bucket_counts: list[int] = field(default_factory=lambda: [0] * len(BUCKETS))
    seconds_sum: float = 0.0
    seconds_count: int = 0

    def observe(self, result: Render) -> None:
        self.renders[outcome_of(result)] += 1
        if result.cached:
            self.cache_hits += 1
            return  # a cache hit took no slot: it would flatter the histogram
        seconds = result.render_ms / 1000
        self.seconds_sum += seconds
        self.seconds_count += 1
        for i, bound in enumerate(BUCKETS):
            if seconds <= bound:
                self.bucket_counts[i] += 1

    def mean_render_s(self) -> float:
        """Mean time on a slot so far (a guess of 2 s before the first render)."""
        return self.seconds_sum / self.seconds_count if self.seconds_count else 2.0

    @property
    def queue_depth(self) -> int:
        """Renders admitted beyond the slots: the ones waiting for a page."""
        return max(0, self.admitted - self.slots)

    def text(self) -> str:
        lines = [
            "# HELP refpool_renders_total Renders answered, by outcome.",
            "# TYPE refpool_renders_total counter",
            *(f'refpool_renders_total{{outcome="{k}"}} {v}' for k, v in self.renders.items()),
            "# HELP refpool_render_cache_hits_total Renders answered from the render cache.",
            "# TYPE refpool_render_cache_hits_total counter",
            f"refpool_render_cache_hits_total {self.cache_hits}",
            "# HELP refpool_renders_refused_total Requests refused with 503 (queue full).",
            "# TYPE refpool_renders_refused_total counter",
            f"refpool_renders_refused_total {self.refused}",
            "# HELP refpool_queue_depth Renders admitted and waiting for a free slot.",
            "# TYPE refpool_queue_depth gauge",
            f"refpool_queue_depth {self.queue_depth}",
            "# HELP refpool_renders_in_flight Renders admitted and not yet answered.",
            "# TYPE refpool_renders_in_flight gauge",
            f"refpool_renders_in_flight {self.admitted}",
            "# HELP refpool_render_seconds Time on a renderer slot per render (cache hits excluded).",
            "# TYPE refpool_render_seconds histogram",
        ]
        for bound, count in zip(BUCKETS, self.bucket_counts, strict=True):
            lines.append(f'refpool_render_seconds_bucket{{le="{bound}"}} {count}')
        lines += [
            f'refpool_render_seconds_bucket{{le="+Inf"}} {self.seconds_count}',
            f"refpool_render_seconds_sum {self.seconds_sum:.6f}",
            f"refpool_render_seconds_count {self.seconds_count}",
        ]
        return "\n".join(lines) + "\n"
