"""Verdicts on a busy machine (prints figures; not a test).

Renders honest sketches while rival Chromiums paint beside them and CPU hogs spin, as on the
machine of the user who saw honest programs rejected as `timeout`. Counts, per honest render,
accepted / infra_error / charged to the sketch; then times how long an infinite loop takes to
be rejected under the same load. Run it on two checkouts to compare before and after.

    .venv/bin/python bench/load.py [--renders 6] [--rivals 3] [--hogs 3] [--deadline 30]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from renderer import RenderConfig, SyncRenderer  # noqa: E402

SKETCHES = ROOT / "tests" / "sketches"
HONEST = [(SKETCHES / n).read_text() for n in ("coral_hibiscus.js", "yellow_hibiscus.js")]
LOOP = (ROOT / "tests" / "hostile" / "infinite_loop.js").read_text()


def rival(stop: threading.Event) -> None:
    with SyncRenderer(RenderConfig(slots=1)) as other:
        while not stop.is_set():
            other.render(HONEST[0] + f"\n// {time.time()}\n", seed=3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renders", type=int, default=6, help="honest renders (default: 6)")
    parser.add_argument("--rivals", type=int, default=3, help="rival Chromiums (default: 3)")
    parser.add_argument("--hogs", type=int, default=3, help="CPU hog processes (default: 3)")
    parser.add_argument("--deadline", type=float, default=30.0, help="seconds (default: 30)")
    args = parser.parse_args()
    stop = threading.Event()
    spin = "import time\nend = time.time() + 1800\nwhile time.time() < end: pass\n"
    hogs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(args.hogs)]
    rivals = [threading.Thread(target=rival, args=(stop,)) for _ in range(args.rivals)]
    try:
        for t in rivals:
            t.start()
        time.sleep(5)
        counts = {"accepted": 0, "infra": 0, "charged to the sketch": 0}
        with SyncRenderer(RenderConfig(slots=2, deadline_s=args.deadline)) as r:
            started = time.monotonic()
            for i in range(args.renders):
                result = r.render(HONEST[i % 2] + f"\n// {i}\n", seed=i)
                if result.infra_error:
                    counts["infra"] += 1
                elif result.gate.violations:
                    counts["charged to the sketch"] += 1
                    print("  charged:", [v.code for v in result.gate.violations])
                else:
                    counts["accepted"] += 1
            honest_s = time.monotonic() - started
            t0 = time.monotonic()
            loop = r.render(LOOP, seed=1)
            loop_s = time.monotonic() - t0
            retries = r.renderer.stats.get("infra_retries", "n/a")
        load = os.getloadavg()[0]
    finally:
        stop.set()
        for hog in hogs:
            hog.kill()
        for t in rivals:
            t.join(300)
    print(f"load average (1 min) at the end: {load:.1f} on {os.cpu_count()} cores")
    print(
        f"honest renders ({args.renders}, deadline {args.deadline:g} s, {honest_s:.0f} s): {counts}"
    )
    print(f"infra retries: {retries}")
    codes = [v.code for v in loop.gate.violations] or [f"infra: {loop.infra_error}"]
    print(f"infinite loop: {codes} after {loop_s:.1f} s")


if __name__ == "__main__":
    main()
