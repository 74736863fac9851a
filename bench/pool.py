"""Benchmark: the diversity report over 1,000 images and the export of 178 (goals: <= 10 s each).

Builds a throwaway store of synthetic 600x600 watercolour-like PNGs (the renderer's size),
then times:
  * report, cold: features computed for all 1,000 PNGs (and cached), metrics, HTML + JSON;
  * report, warm: the same with the feature cache filled (the usual case: features are
    computed once per PNG, e.g. by `pool build`);
  * export of a released 178-image version to the Hub layout.

    .venv/bin/python bench/pool.py [--images 1000] [--pool 178]
"""

from __future__ import annotations

import argparse
import colorsys
import io
import random
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from curation.ratings import record_rating  # noqa: E402
from pool.export import export_version  # noqa: E402
from pool.report import write_report  # noqa: E402
from pool.selection import build_pool, save_draft  # noqa: E402
from pool.versions import release  # noqa: E402
from refpool.store import Store, candidates  # noqa: E402


def painting(seed: int, size: int = 600) -> bytes:
    rng = random.Random(seed)
    img = Image.new("RGB", (size, size), (246, 239, 226))
    draw = ImageDraw.Draw(img, "RGBA")
    hue = rng.random()
    for _ in range(rng.randint(10, 25)):
        r, g, b = colorsys.hsv_to_rgb(
            (hue + rng.gauss(0, 0.08)) % 1, rng.uniform(0.4, 0.9), rng.uniform(0.5, 0.95)
        )
        cx, cy, rad = rng.uniform(100, 500), rng.uniform(100, 500), rng.uniform(20, 140)
        draw.ellipse(
            (cx - rad, cy - rad, cx + rad, cy + rad),
            fill=(int(r * 255), int(g * 255), int(b * 255), 190),
        )
    buf = io.BytesIO()
    img.filter(ImageFilter.GaussianBlur(1.5)).save(buf, "PNG")
    return buf.getvalue()


def make_store(home: Path, n: int) -> tuple[Store, list[int]]:
    store = Store(home)
    photos = [
        store.insert(
            "photos",
            {
                "sha256": f"p{i}",
                "file_name": f"flower{i}.jpg",
                "path": f"photos/{i}.jpg",
                "licence": "CC-BY" if i % 4 else "CC-BY-SA",
                "licence_version": "2.0",
                "author": f"author {i}",
                "source_url": f"https://example.org/{i}",
                "width": 600,
                "height": 600,
                "phash": "0" * 16,
                "subject": "hibiscus",
            },
        )
        for i in range(12)
    ]
    models = ("procedural", "glm-5.2", "kimi-k3", "qwen3-coder-next")
    ids = []
    for i in range(n):
        sha = store.put_png(painting(i))
        prog = store.put_program(f"// program {i}\nfunction setup() {{}}\n")
        ids.append(
            candidates.save(
                store,
                {
                    "job_key": f"bench/{i}",
                    "photo_id": photos[i % len(photos)],
                    "generator": models[i % 4],
                    "round": i % 3,
                    "seed": i,
                    "program_sha": prog,
                    "accepted": 1,
                    "coverage": random.Random(i).uniform(0.05, 0.6),
                    "png_sha": sha,
                },
            )
        )
    for cid in ids:
        record_rating(store, cid, "bench", "love" if cid % 3 == 0 else "okay")
    return store, ids


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=1000, help="images in the report")
    ap.add_argument("--pool", type=int, default=178, help="images in the exported version")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        store, ids = make_store(Path(tmp) / "data", args.images)
        print(f"setup: {args.images} synthetic 600x600 PNGs in {time.perf_counter() - t0:.1f} s")
        tiers = {c: ("love" if c % 3 == 0 else "okay") for c in ids}

        t0 = time.perf_counter()
        write_report(
            store,
            Path(tmp) / "cold.html",
            tiers,
            "bench",
            json_out=Path(tmp) / "cold.json",
            progress=False,
        )
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = write_report(
            store,
            Path(tmp) / "warm.html",
            tiers,
            "bench",
            json_out=Path(tmp) / "m.json",
            progress=False,
        )
        warm = time.perf_counter() - t0
        size = (Path(tmp) / "warm.html").stat().st_size
        print(
            f"report over {args.images} images: cold {cold:.2f} s (features computed),"
            f" warm {warm:.2f} s (features cached); HTML {size / 1e6:.1f} MB;"
            f" Vendi hash {res.metrics['vendi']['hash']}, colour {res.metrics['vendi']['colour']}"
        )

        draft = build_pool(store, target=args.pool, dup_threshold=4)
        save_draft(store, draft)
        pv = release(store, version="1.0.0")
        t0 = time.perf_counter()
        result = export_version(store, Path(tmp) / "export", pv, progress=False)
        export_s = time.perf_counter() - t0
        total = sum(s for _, s in result.files)
        print(
            f"export of {result.rows} images: {export_s:.2f} s ({total / 1e6:.1f} MB,"
            f" {len(result.files)} files, includes the card's diversity summary)"
        )
        goals = {"report (cold)": cold, "report (warm)": warm, "export": export_s}
        print(
            "goals (<= 10 s): "
            + ", ".join(f"{k} {'ok' if v <= 10 else 'MISSED'}" for k, v in goals.items())
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
