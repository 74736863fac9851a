"""Benchmark: `refpool pool calibrate` verdicts per second against a loopback VLM judge that
takes a fixed time per request (the judge's own concurrency limit is what bounds the rate).

Builds a throwaway store of N accepted candidates and a folder of policy paintings, then runs
the real command in-process, once per --samples value, and prints judge calls, wall time,
verdicts/s, the most requests the judge held at once, and the ideal rate (limit / delay).

    .venv/bin/python bench/calibrate.py [--candidates 12] [--samples 1,3] [--delay 0.25]
                                        [--concurrency 4]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def painting(coverage: float, seed: int) -> bytes:
    """A pale ground with one block of paint covering `coverage` of a 100 x 100 canvas."""
    from PIL import Image

    img = Image.new("RGB", (100, 100), (246, 239, 226))
    pixels = round(coverage * 10_000)
    colour = (120 + seed % 100, 50, 90)
    for i in range(pixels):
        img.putpixel((5 + i % 80, 5 + i // 80), colour)
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def build_store(home: Path, n: int) -> None:
    from refpool.core.store import Store, candidates

    store = Store(home)
    photo = store.insert(
        "photos",
        {
            "sha256": "b" * 64,
            "file_name": "bench.jpg",
            "path": "bench.jpg",
            "licence": "CC-BY",
            "licence_version": "2.0",
            "author": "bench",
            "source_url": "https://example.org/bench",
            "width": 100,
            "height": 100,
            "phash": "0" * 16,
            "subject": "rose",
        },
    )
    for i in range(n):
        cov = 0.2 + 0.4 * i / max(1, n - 1)
        candidates.save(
            store,
            {
                "job_key": f"bench/{i}",
                "photo_id": photo,
                "generator": "procedural",
                "round": 1,
                "seed": i,
                "accepted": 1,
                "coverage": cov,
                "png_sha": store.put_png(painting(cov, i)),
            },
        )
    store.close()


def run(samples: int, n: int, delay: float, limit: int) -> dict[str, float]:
    from generators.loopback import LoopbackOpenAI
    from refpool import cli

    verdict = json.dumps({"winner": "A", "reason": "bench"})
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        os.environ["REFPOOL_HOME"] = str(home)
        build_store(home, n)
        folder = Path(tmp) / "policy"
        folder.mkdir()
        for i in range(samples):
            (folder / f"p{i}.png").write_bytes(painting(0.25 + 0.1 * i, 1000 + i))
        with LoopbackOpenAI(default=lambda body: {"content": verdict, "delay": delay}) as server:
            entry = {
                "model": "bench-vlm",
                "base_url": server.base_url,
                "key_env": None,
                "accepts_images": True,
                "roles": ["judge"],
                "concurrency": limit,
                "structured_output": "json_object",
            }
            models = Path(tmp) / "m.json"
            models.write_text(json.dumps({"models": {"bench-judge": entry}}))
            argv = ["pool", "calibrate", "--paintings", str(folder), "--models-file", str(models)]
            argv += ["--samples", str(samples), "--json"]
            started = time.perf_counter()
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                code = cli.main(argv)
            wall = time.perf_counter() - started
            assert code == 0, code
            calls = len(server.requests)
            return {
                "calls": calls,
                "wall_s": wall,
                "rate": calls / wall,
                "max_in_flight": server.max_in_flight,
            }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=12)
    ap.add_argument("--samples", default="1,3")
    ap.add_argument("--delay", type=float, default=0.25, help="seconds per judge request")
    ap.add_argument("--concurrency", type=int, default=4, help="the judge entry's limit")
    args = ap.parse_args()
    ideal = args.concurrency / args.delay
    print(
        f"judge: {args.delay:g} s per request, limit {args.concurrency} in flight"
        f" (ideal {ideal:.1f} verdicts/s); {args.candidates} candidates"
    )
    run(1, 2, 0.0, args.concurrency)  # warm-up: imports and the first connection, untimed
    print(f"{'samples':>8}{'calls':>7}{'wall s':>9}{'verdicts/s':>12}{'in flight':>11}")
    for samples in (int(s) for s in args.samples.split(",")):
        r = run(samples, args.candidates, args.delay, args.concurrency)
        print(
            f"{samples:>8}{r['calls']:>7}{r['wall_s']:>9.2f}{r['rate']:>12.1f}"
            f"{r['max_in_flight']:>11}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
