"""Calibrate the near-duplicate distance with the real renderer, on real chains.

Paints chains (pool/similarity/chains.py): procedural programs from the sample photos and from copies of
them with the colours turned, each under several render seeds and through revision rounds;
plus the hand-written test sketches. Every pair of paintings gets a kind: duplicates (another
seed of one program; a parent and its revision) or distinct (another program of the photo, a
recoloured photo, another photo). It then measures, for the old 64-bit dHash and for the
curator-like distance of pool/similarity/distance.py, how each kind's distances spread and how well a
threshold separates the two, and suggests the threshold. What it prints is what it computed.

    .venv/bin/python -m pool.similarity.threshold [--programs 0 1] [--seeds 0 1] [--rounds 2]
        [--save DIR | --load DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from pool.similarity import chains as ch
from pool.similarity import distance as sim
from pool.similarity.clusters import hamming_matrix, near_duplicate_clusters
from pool.similarity.features import compute_features
from refpool.core.defaults import DUP_THRESHOLD

OLD_DHASH_THRESHOLD = 15  # the threshold the pool used before this distance


def distances(paintings: list[ch.Painting]) -> dict[str, np.ndarray]:
    """{"dhash": bits, "similarity": 0..100, and each similarity component 0..1}."""
    hashes = [compute_features(p.png).phash for p in paintings]
    sigs = [sim.signature(ch.open_rgb(p.png)) for p in paintings]
    parts = sim.component_distances(sigs)
    return {
        "dhash": hamming_matrix(hashes).astype(float),
        "similarity": sim.distance_matrix(sigs),
        **parts,
    }


def scores(dup: np.ndarray, distinct: np.ndarray, threshold: float) -> dict[str, Any]:
    """Precision and recall of "duplicate" = distance <= threshold."""
    tp, fn = int((dup <= threshold).sum()), int((dup > threshold).sum())
    fp = int((distinct <= threshold).sum())
    return {
        "threshold": threshold,
        "duplicates_found": tp,
        "duplicates_missed": fn,
        "distinct_merged": fp,
        "precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "recall": round(tp / (tp + fn), 3) if tp + fn else None,
    }


def best_threshold(dup: np.ndarray, distinct: np.ndarray, never: np.ndarray | None = None) -> float:
    """The threshold with the lowest balanced error (the share of duplicates missed and the
    share of distinct pairs merged, averaged: pair counts depend on how many chains were
    painted, so neither side outvotes the other), among thresholds that merge none of the
    `never` pairs (paintings of different photos). Placed midway in the gap it sits in."""
    never = np.zeros(0) if never is None else never
    values = np.unique(np.concatenate([dup, distinct]))
    if len(never):
        values = values[values < never.min()]
    if len(values) == 0:
        return 0.0
    miss = np.array([(dup > t).mean() if len(dup) else 0.0 for t in values])
    merge = np.array([(distinct <= t).mean() if len(distinct) else 0.0 for t in values])
    k = int(np.argmin((miss + merge) / 2))
    above = np.concatenate([dup, distinct, never])
    above = above[above > values[k]]
    return float((values[k] + above.min()) / 2) if len(above) else float(values[k])


def sweep(pairs: list[tuple[float, str]], thresholds: Iterable[float]) -> list[dict[str, Any]]:
    """For each threshold: pairs at or below it, by kind (what a threshold would merge)."""
    kinds = sorted({k for _, k in pairs})
    return [
        {"threshold": t, **{k: sum(1 for d, kk in pairs if kk == k and d <= t) for k in kinds}}
        for t in thresholds
    ]


def calibrate(paintings: list[ch.Painting]) -> dict[str, Any]:
    """Distances by pair kind, and the separation each measure achieves."""
    pairs = ch.pairs(paintings)
    dists = distances(paintings)
    kinds = ch.DUPLICATE_KINDS + ("chain",) + ch.DISTINCT_KINDS
    table: dict[str, dict[str, Any]] = {}
    for name, d in dists.items():
        by_kind = {k: np.array([d[i, j] for i, j, kk in pairs if kk == k]) for k in kinds}
        table[name] = {
            k: {
                "n": int(len(v)),
                "min": round(float(v.min()), 2) if len(v) else None,
                "median": round(float(np.median(v)), 2) if len(v) else None,
                "max": round(float(v.max()), 2) if len(v) else None,
            }
            for k, v in by_kind.items()
        }
        dup = np.concatenate([by_kind[k] for k in ch.DUPLICATE_KINDS])
        distinct = np.concatenate([by_kind[k] for k in ch.DISTINCT_KINDS])
        photos = np.concatenate([by_kind[k] for k in ("recoloured", "photo")])
        best = best_threshold(dup, distinct, photos)
        table[name]["best"] = scores(dup, distinct, round(best, 2))
        if name == "dhash":
            table[name]["at_old_threshold"] = scores(dup, distinct, OLD_DHASH_THRESHOLD)
        if name == "similarity":
            table[name]["at_default"] = scores(dup, distinct, DUP_THRESHOLD)
            clusters = near_duplicate_clusters(d, DUP_THRESHOLD)
            table[name]["clusters_mixing_chains"] = sum(
                1 for g in clusters if len({paintings[i].chain for i in g}) > 1
            )
            table[name]["clusters_mixing_photos"] = sum(
                1 for g in clusters if len({paintings[i].photo for i in g}) > 1
            )
            table[name]["clusters"] = len(clusters)
    sim_pairs = [(float(dists["similarity"][i, j]), k) for i, j, k in pairs]
    return {
        "paintings": len(paintings),
        "sweep": sweep(sim_pairs, range(6, 25, 2)),
        "chains": len({p.chain for p in paintings}),
        "pairs": {k: sum(1 for *_, kk in pairs if kk == k) for k in kinds},
        "weights": dict(zip(sim.COMPONENTS, sim.WEIGHTS, strict=True)),
        "measures": table,
        # rounded down: a notch stricter than the gap's middle keeps other photos apart
        "suggested_threshold": int(table["similarity"]["best"]["threshold"]),
    }


def format_table(result: dict[str, Any]) -> str:
    kinds = list(result["pairs"])
    head = "| measure | " + " | ".join(f"{k} (n={result['pairs'][k]})" for k in kinds)
    lines = [head + " |", "|---" * (len(kinds) + 1) + "|"]
    for name, row in result["measures"].items():
        cells = [
            "-" if row[k]["n"] == 0 else f"{row[k]['min']}-{row[k]['max']} (med {row[k]['median']})"
            for k in kinds
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        "| measure | threshold | dup found | dup missed | distinct merged | precision | recall |"
    )
    lines.append("|---|---|---|---|---|---|---|")
    for name, row in result["measures"].items():
        for key in ("at_old_threshold", "at_default", "best"):
            if key in row:
                s = row[key]
                lines.append(
                    f"| {name} ({key.replace('_', ' ')}) | {s['threshold']} | {s['duplicates_found']}"
                    f" | {s['duplicates_missed']} | {s['distinct_merged']} | {s['precision']}"
                    f" | {s['recall']} |"
                )
    lines.append("")
    kinds = [k for k in result["pairs"] if k in result["sweep"][0]] if result["sweep"] else []
    lines.append("| similarity threshold | " + " | ".join(f"{k} within" for k in kinds) + " |")
    lines.append("|---" * (len(kinds) + 1) + "|")
    for row in result["sweep"]:
        lines.append(f"| {row['threshold']} | " + " | ".join(str(row[k]) for k in kinds) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Calibrate the near-duplicate distance on real chains."
    )
    ap.add_argument(
        "--programs", type=int, nargs="+", default=[0, 1], help="program seeds per photo"
    )
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1], help="render seeds per program")
    ap.add_argument("--rounds", type=int, default=2, help="revision rounds per chain")
    ap.add_argument(
        "--turns",
        type=int,
        nargs="+",
        default=[0, 120, 240],
        help="hue turns (degrees) of each photo",
    )
    ap.add_argument("--save", type=Path, help="keep the paintings (PNGs + manifest) in this folder")
    ap.add_argument(
        "--load", type=Path, help="measure paintings saved by --save instead of rendering"
    )
    ap.add_argument("--json", type=Path, help="write the whole result as JSON")
    args = ap.parse_args(argv)
    if args.load:
        paintings = ch.load(args.load)
    else:
        from renderer import RenderConfig, SyncRenderer

        # Generous deadline: calibration is not timed, and a busy machine must not drop renders.
        cache = args.save / "render-cache" if args.save else None
        with SyncRenderer(RenderConfig(deadline_s=120, cache_dir=cache)) as r:

            def render(source: str, seed: int):  # noqa: ANN202
                return r.render(source, seed=seed)

            note = lambda name: print(f"rendered {name}", file=sys.stderr)  # noqa: E731
            paintings = ch.render_chains(
                render, ch.sample_photos(args.turns), args.programs, args.seeds, args.rounds, note
            )
            sketches = [ch.SKETCHES / "coral_hibiscus.js", ch.SKETCHES / "yellow_hibiscus.js"]
            paintings += ch.render_sketches(render, sketches, args.seeds)
        if args.save:
            ch.save(paintings, args.save)
    result = calibrate(paintings)
    print(
        f"{result['paintings']} paintings in {result['chains']} chains; weights {result['weights']}"
    )
    print(format_table(result))
    print(
        f"suggested near-duplicate threshold (similarity, 0..100): {result['suggested_threshold']}"
    )
    print(f"current default (refpool.core.defaults.DUP_THRESHOLD): {DUP_THRESHOLD}")
    row = result["measures"]["similarity"]
    print(
        f"clusters at the default (complete linkage): {row['clusters']},"
        f" of which {row['clusters_mixing_chains']} mix paintings of different chains"
        f" and {row['clusters_mixing_photos']} of different photos"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
