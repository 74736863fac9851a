"""Benchmark: the diversity report over 1,000 and 10,000 images and the export of 178 (goals:
<= 10 s each), and publishing 178 and 5,000 images to the loopback Hub (wall time, peak RSS).

Builds a throwaway store of synthetic 600x600 watercolour-like PNGs (the renderer's size),
then times:
  * report, cold: features computed for all the PNGs (and cached), metrics, HTML + JSON;
  * report, warm: the same with the feature cache filled (the usual case: features are
    computed once per PNG, e.g. by `pool build`);
  * export of a released 178-image version as a release (images/, sources/, metadata.jsonl);
  * publish of a release of each --publish size (card without its diversity table, which is
    the report's cost) to the loopback Hub of tests/ (run in a
    process of its own, so its memory is not ours), through huggingface_hub's LFS path: the
    publishing process runs alone, and its peak RSS is reported next to its RSS before
    publishing (imports and store), so bounded memory shows as a peak that does not grow with
    the pool. Each image is a distinct file (a painting with a unique PNG text chunk), so LFS
    cannot deduplicate the uploads.

    .venv/bin/python bench/pool.py [--images 1000,10000] [--pool 178] [--publish 178,5000]
                                   [--only publish|report]
"""

from __future__ import annotations

import argparse
import colorsys
import io
import json
import os
import random
import resource
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from curation.ratings import record_rating  # noqa: E402
from pool.dataset.export import export_version  # noqa: E402
from pool.dataset.release import release  # noqa: E402
from pool.diversity.report import write_report  # noqa: E402
from pool.selection.draft import PoolDraft, build_pool, save_draft  # noqa: E402
from refpool.core.store import Store, candidates  # noqa: E402


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


def make_store(
    home: Path, n: int, png: Callable[[int], bytes] | None = None
) -> tuple[Store, list[int]]:
    store = Store(home)
    if png is None:  # paint in every core: 10,000 paintings take ~4 minutes on one
        with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as workers:
            made = list(workers.map(painting, range(n), chunksize=64))
        png = made.__getitem__
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
        sha = store.put_png(png(i))
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


def unique_png(base: bytes, i: int) -> bytes:
    """`base` with a tEXt chunk naming i before IEND: a distinct file for the cost of a copy."""
    data = b"refpool-bench\0" + str(i).encode()
    crc = zlib.crc32(b"tEXt" + data)
    return (
        base[:-12]
        + struct.pack(">I", len(data))
        + b"tEXt"
        + data
        + struct.pack(">I", crc)
        + base[-12:]
    )


PROFILE = os.environ.get("BENCH_PROFILE", "").split()  # e.g. "-m cProfile -s cumtime"
HUB = (
    "import sys, time; sys.path.insert(0, sys.argv[1]);"
    "from loopback_hub import LoopbackHub; hub = LoopbackHub().start();"
    "print(hub.url, flush=True); time.sleep(10**6)"
)


def publish_figure(n: int, tmp: Path) -> str:
    """Release n images in a fresh store, publish them to a loopback Hub; one line of figures."""
    bases = [painting(i) for i in range(40)]
    store, ids = make_store(tmp / f"pub{n}", n, png=lambda i: unique_png(bases[i % 40], i))
    tiers = {c: ("love" if c % 3 == 0 else "okay") for c in ids}
    draft = PoolDraft(candidate_ids=sorted(ids), tiers=tiers, excluded=[], params={"bench": n})
    release(store, version="1.0.0", draft=draft)
    store.close()
    tests = Path(__file__).resolve().parent.parent / "tests"
    hub = subprocess.Popen(
        [sys.executable, "-c", HUB, str(tests)], stdout=subprocess.PIPE, text=True
    )
    try:
        url = (hub.stdout.readline() if hub.stdout else "").strip()
        env = {**os.environ, "HF_ENDPOINT": url, "HF_HUB_DISABLE_XET": "1", "HF_HOME": str(tmp)}
        out = subprocess.run(
            [sys.executable, *PROFILE, __file__, "--publish-child", str(tmp / f"pub{n}")],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        hub.kill()
        hub.wait()
    lines = out.stdout.strip().splitlines()
    figure_line = next(line for line in reversed(lines) if line.startswith('{"wall_s"'))
    if PROFILE:  # the profiler prints its table after the figures: show it, apart
        print(out.stdout, file=sys.stderr)
    fig = json.loads(figure_line)
    return (
        f"publish of {n} images to the loopback Hub: {fig['wall_s']:.1f} s wall"
        f" ({fig['mb']:.0f} MB in {fig['files']} files, one commit, then the tag);"
        f" peak RSS {fig['peak_mb']:.0f} MB (before publishing: {fig['before_mb']:.0f} MB)"
    )


def publish_child(home: str) -> int:
    """Run in a process of its own: publish the store's release, print wall time and RSS."""
    from loopback_repo import TOKEN

    from pool.dataset.publish import PublishResult, publish

    store = Store(Path(home))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    # Without the card's diversity table: that is the report's cost (measured above), not
    # the upload's, and it would hide what this figure is about.
    result = publish(store, "ana/bench-pool", token=TOKEN, progress=False, with_diversity=False)
    wall = time.perf_counter() - t0
    assert isinstance(result, PublishResult) and result.committed
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = sum(s for _, s in result.plan.files) / 1e6
    figures = {"wall_s": wall, "peak_mb": peak, "before_mb": before, "mb": size}
    print(json.dumps({**figures, "files": len(result.plan.files)}))
    return 0


def report_figure(home: Path, n: int) -> tuple[float, float]:
    """A store of n paintings; the report over all of them, cold then warm; one line."""
    t0 = time.perf_counter()
    store, ids = make_store(home, n)
    print(f"setup: {n} synthetic 600x600 PNGs in {time.perf_counter() - t0:.1f} s", flush=True)
    tiers = {c: ("love" if c % 3 == 0 else "okay") for c in ids}
    times = []
    for run in ("cold", "warm"):
        t0 = time.perf_counter()
        res = write_report(
            store,
            home / f"{run}.html",
            tiers,
            "bench",
            json_out=home / f"{run}.json",
            progress=False,
        )
        times.append(time.perf_counter() - t0)
    size = (home / "warm.html").stat().st_size
    print(
        f"report over {n} images: cold {times[0]:.2f} s (features computed),"
        f" warm {times[1]:.2f} s (features cached); HTML {size / 1e6:.1f} MB;"
        f" Vendi hash {res.metrics.vendi.hash}, colour {res.metrics.vendi.colour};"
        f" {res.metrics.near_duplicates.n_clusters} near-duplicate clusters",
        flush=True,
    )
    store.close()
    return times[0], times[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--images", default="1000,10000", help="report sizes (comma list; goal: <= 10 s each)"
    )
    ap.add_argument("--pool", type=int, default=178, help="images in the exported version")
    ap.add_argument("--publish", default="178,5000", help="pool sizes to publish (comma list)")
    ap.add_argument(
        "--only", choices=("publish", "report"), default=None, help="run only these figures"
    )
    ap.add_argument("--publish-child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.publish_child:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        return publish_child(args.publish_child)
    if args.only == "publish":
        with tempfile.TemporaryDirectory() as tmp:
            for n in (int(x) for x in args.publish.split(",") if x):
                print(publish_figure(n, Path(tmp)), flush=True)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        sizes = [int(x) for x in args.images.split(",") if x]
        goals: dict[str, float] = {}
        for size in sizes:  # the first size's store is also the one exported below
            home = Path(tmp) / f"data{size}"
            cold, warm = report_figure(home, size)
            goals[f"report {size} (cold)"], goals[f"report {size} (warm)"] = cold, warm
        if args.only == "report":
            print(", ".join(f"{k} {'ok' if v <= 10 else 'MISSED'}" for k, v in goals.items()))
            return 0
        store = Store(Path(tmp) / f"data{sizes[0]}")
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
        goals["export"] = export_s
        print(
            "goals (<= 10 s): "
            + ", ".join(f"{k} {'ok' if v <= 10 else 'MISSED'}" for k, v in goals.items())
        )
        for n in (int(x) for x in args.publish.split(",") if x):
            print(publish_figure(n, Path(tmp)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
