"""Calibrate the near-duplicate threshold with the real renderer.

"The same painting" = one program re-rendered with other seeds. Their perceptual-hash (dHash)
distances give the floor a threshold must clear; distances between different programs give
the ceiling.

    .venv/bin/python -m pool.calibrate [SKETCH.js ...] [--seeds 0 1 2 3]
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pool.features import compute_features
from refpool.contracts import Render

SKETCHES = Path(__file__).resolve().parent.parent / "tests" / "sketches"


def calibrate(
    render: Callable[[str, int], Render],
    sources: dict[str, str],
    seeds: tuple[int, ...] = (0, 1, 2),
) -> dict[str, Any]:
    """Render every source with every seed; return within- and between-program distances."""
    hashes: dict[str, list[int]] = {}
    for name, source in sources.items():
        for seed in seeds:
            result = render(source, seed)
            if not result.accepted or not result.png:
                raise RuntimeError(
                    f"{name} seed {seed} did not render: {result.gate.violations or result.infra_error}"
                )
            hashes.setdefault(name, []).append(compute_features(result.png).phash)

    def dist(a: int, b: int) -> int:
        return (a ^ b).bit_count()

    within = {n: [dist(a, b) for a, b in itertools.combinations(h, 2)] for n, h in hashes.items()}
    pairs = itertools.combinations(hashes.values(), 2)
    between = [dist(a, b) for h1, h2 in pairs for a in h1 for b in h2]
    within_max = max((d for ds in within.values() for d in ds), default=0)
    between_min = min(between, default=64)
    return {
        "seeds": list(seeds),
        "within": within,
        "within_max": within_max,
        "between_min": between_min,
        "between_median": sorted(between)[len(between) // 2] if between else None,
        # Midway: seed noise never splits a painting, and distinct paintings never merge.
        "suggested_threshold": (within_max + between_min) // 2 if between else within_max + 2,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Measure perceptual-hash distances of re-rendered sketches."
    )
    ap.add_argument(
        "sketches", nargs="*", help="p5.brush sketch files (default: the test sketches)"
    )
    ap.add_argument(
        "--seeds", type=int, nargs="+", default=[0, 1, 2, 3], help="seeds to render each with"
    )
    args = ap.parse_args(argv)
    from renderer import RenderConfig, SyncRenderer

    paths = [Path(p) for p in args.sketches] or [
        SKETCHES / "coral_hibiscus.js",
        SKETCHES / "yellow_hibiscus.js",
    ]
    sources = {p.stem: p.read_text() for p in paths}
    with SyncRenderer(RenderConfig()) as r:
        result = calibrate(lambda s, seed: r.render(s, seed=seed), sources, tuple(args.seeds))
    for name, ds in result["within"].items():
        print(f"{name}: same program, seeds {result['seeds']}: distances {ds}")
    print(f"different programs: min {result['between_min']}, median {result['between_median']}")
    print(f"suggested --dup-threshold: {result['suggested_threshold']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
