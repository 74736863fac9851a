"""What each vendor failure costs: every row of the spellings table served over loopback to
`generators.llm.chat`, two requests per model, on a first run and on a rerun.

    .venv/bin/python bench/vendor_meanings.py [--table refpool/core/vendor_spellings.toml]

For each row it prints the requests the vendor got (first run, rerun) beside what the row's
meaning says they should be, and per meaning how many rows held. It only uses `llm.chat`,
`Endpoints`, `load_models` and the paid-reply lookup, so it runs against older code too (point
--table at this tree's table to compare a checkout from before the table existed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("REFPOOL_RETRY_BASE_S", "0.01")
BUDGET_S = 2.0
KEYS = ("a", "b")


def expected(row: dict, wait_s: float | None) -> tuple[int, int]:
    """Requests for two keys on a first run and on a rerun, as the row's meaning says."""
    if row.get("adapt"):
        return 3, 0  # a: refused, adapted, answered; b: answered; a rerun reuses both
    if row["means"] == "request":
        return 2, 0  # each refused once, the model goes on; never asked again
    if row["means"] == "config":
        return 1, 0  # the model stops; the same entry is not asked again
    if wait_s is not None and wait_s > BUDGET_S:
        return 1, 1  # stopped until the stated reset; asked again on a rerun
    if row["means"] == "account":
        return 1, 1  # stopped for the run, asked again on the next
    return 8, 8  # the vendor's: four attempts each, asked again on a rerun


async def run_once(store, cfgs: dict, llm) -> None:
    endpoints = llm.Endpoints()
    try:
        for name, cfg in cfgs.items():
            for key in KEYS:
                job = f"{name}/{key}"
                if llm.paid_reply(store, job) is not None:
                    continue  # a rerun reuses what was paid for, as coders do
                content: object = "paint a flower"
                if cfg.accepts_images:
                    content = [{"type": "text", "text": "paint"}, llm.image_part(b"x", "image/png")]
                msgs = [{"role": "user", "content": content}]
                await llm.chat(
                    store, endpoints, cfg, msgs, purpose="coder", temperature=0.6, job_key=job
                )
    finally:
        await endpoints.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", default=str(ROOT / "refpool/core/vendor_spellings.toml"))
    args = parser.parse_args()
    rows = tomllib.loads(Path(args.table).read_text("utf-8"))["failure"]
    by_id = {row["id"]: row for row in rows}

    import fake_vendor as fv

    from generators import llm
    from refpool.core.store import Store

    def answer(body: dict) -> fv.Answer:
        row = by_id[str(body["model"]).removeprefix("bench/")]
        fixture = row["fixture"]
        if fixture.get("sent") is not None and fixture["sent"] not in body:
            return fv.completion(fv.FENCED)
        headers = dict(fixture.get("headers", {}))
        return fv.Answer(fixture["status"], fixture["body"].encode(), headers)

    with tempfile.TemporaryDirectory() as home, fv.FakeVendor() as server:
        server.fallback = answer
        entries = {
            row["id"]: {
                "model": f"bench/{row['id']}",
                "base_url": server.base_url,
                "accepts_images": row.get("needs") == "images",
                "retry_budget_s": BUDGET_S,
                "concurrency": 1,
            }
            for row in rows
        }
        models = Path(home) / "models.json"
        models.write_text(json.dumps({"models": entries}))
        cfgs = llm.load_models(models)
        store = Store(Path(home) / "data")
        asyncio.run(run_once(store, cfgs, llm))
        first = Counter(str(r[0]).removeprefix("bench/") for r in server.requests)
        asyncio.run(run_once(store, cfgs, llm))
        total = Counter(str(r[0]).removeprefix("bench/") for r in server.requests)
        store.close()
    held: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    print(f"{'row':32} {'means':8} {'want':>7} {'got':>7}")
    for row in rows:
        want = expected(row, row["fixture"].get("wait"))  # the wait the reply states
        got = (first[row["id"]], total[row["id"]] - first[row["id"]])
        seen[row["means"]] += 1
        held[row["means"]] += got == want
        mark = "" if got == want else "  <- differs"
        print(f"{row['id']:32} {row['means']:8} {str(want):>7} {str(got):>7}{mark}")
    print()
    for means in ("vendor", "request", "config", "account"):
        print(f"{means:8} held {held[means]} of {seen[means]}")
    print(f"all      held {sum(held.values())} of {sum(seen.values())} rows")


if __name__ == "__main__":
    main()
