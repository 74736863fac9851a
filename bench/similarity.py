"""Benchmark: the near-duplicate distance over all candidates (what the report's all-candidates
clusters and `pool build` pay), on synthetic 600x600 watercolour-like PNGs.

Prints: features per image (signature included), the full n x n distance matrix, and the
complete-linkage clustering, for each --n.

    .venv/bin/python bench/similarity.py [--n 500 1000 2000]
"""

from __future__ import annotations

import argparse
import colorsys
import io
import random
import sys
import time
from pathlib import Path

from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pool.similarity import distance as sim  # noqa: E402
from pool.similarity.clusters import near_duplicate_clusters
from pool.similarity.features import compute_features  # noqa: E402


def painting(i: int) -> bytes:
    rng = random.Random(i)
    img = Image.new("RGB", (600, 600), (246, 239, 226))
    draw = ImageDraw.Draw(img, "RGBA")
    hue = rng.random()
    for _ in range(8):
        r, g, b = colorsys.hsv_to_rgb(hue + rng.uniform(-0.05, 0.05), rng.uniform(0.4, 0.9), 0.9)
        cx, cy, rad = rng.uniform(200, 400), rng.uniform(200, 400), rng.uniform(40, 160)
        draw.ellipse(
            (cx - rad, cy - rad, cx + rad, cy + rad),
            fill=(int(r * 255), int(g * 255), int(b * 255), 140),
        )
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[500, 1000, 2000])
    args = ap.parse_args()
    sample = 40
    pngs = [painting(i) for i in range(sample)]
    t = time.perf_counter()
    sigs = [compute_features(p).signature for p in pngs]
    per_image = (time.perf_counter() - t) / sample
    print(f"features (with signature): {per_image * 1000:.0f} ms per 600 px image")
    for n in args.n:
        many = [sigs[i % sample] for i in range(n)]
        t = time.perf_counter()
        d = sim.distance_matrix(many)
        t_matrix = time.perf_counter() - t
        t = time.perf_counter()
        clusters = near_duplicate_clusters(d, 15)
        t_cluster = time.perf_counter() - t
        print(
            f"n={n}: distance matrix {t_matrix:.2f} s, clustering {t_cluster:.2f} s"
            f" ({len(clusters)} clusters), matrix {d.nbytes / 1e6:.0f} MB"
        )


if __name__ == "__main__":
    main()
