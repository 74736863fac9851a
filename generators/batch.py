"""The three-round loop and batch runs: photos x generators x slots, resumable, async.

Round 0 writes a program; rounds 1.. revise the previous program from its render, critique and
gate violations. Each finished round is one `candidates` row (job_key = photo/generator/slot/
seed/round), committed before the next round starts, so a rerun skips it and `kill -9` loses
nothing finished. Rendering overlaps with model waits: every chain is its own task, model calls
are limited per endpoint and renders by the renderer's slots.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from generators import llm
from generators.analysis import analyse_path
from generators.coders import (
    OUTCOME_FEEDBACK,
    HeuristicCritic,
    Job,
    ModelCoder,
    Previous,
    ProceduralCoder,
    VLMCritic,
    coder_outcome,
)
from refpool.contracts import Critique, Render, Violation
from refpool.store import Store, sha256_bytes
from refpool.store.photos import get_photo, list_photos, photo_file

PROFILE = "reference"
# unfinished: a rerun tries again (critic_error: only the critique is redone)
TRANSIENT = ("infra_error", "http_error", "timeout", "critic_error")


@dataclass
class _Ctx:
    store: Store
    renderer: Any
    coders: dict
    critic: Any
    run_id: int
    bar: Any
    new_rows: list


def generate(
    store: Store,
    *,
    photo_ids: list[int] | None = None,
    generators: tuple[str, ...] | list[str] = ("procedural",),
    candidates: int = 1,
    rounds: int = 3,
    concurrency: int = 4,
    seed: int = 0,
    renderer: Any = None,
    progress: bool = True,
    critic: str = "heuristic",
    models_file: str | None = None,
) -> dict:
    """Run (or resume) a batch; returns the summary dict (see `summarise`).

    `renderer` may be an async `renderer.Renderer` (used on this loop), a `SyncRenderer`
    (called from worker threads) or None (a Renderer is started and closed here).
    Must be called outside a running event loop; use `generate_async` inside one.
    """
    return asyncio.run(
        generate_async(
            store,
            photo_ids=photo_ids,
            generators=generators,
            candidates=candidates,
            rounds=rounds,
            concurrency=concurrency,
            seed=seed,
            renderer=renderer,
            progress=progress,
            critic=critic,
            models_file=models_file,
        )
    )


async def generate_async(
    store: Store,
    *,
    photo_ids=None,
    generators=("procedural",),
    candidates: int = 1,
    rounds: int = 3,
    concurrency: int = 4,
    seed: int = 0,
    renderer: Any = None,
    progress: bool = True,
    critic: str = "heuristic",
    models_file: str | None = None,
) -> dict:
    if candidates < 1 or rounds < 1 or concurrency < 1:
        raise ValueError("candidates, rounds and concurrency must each be at least 1")
    photos = [get_photo(store, i) for i in photo_ids] if photo_ids else list_photos(store)
    if not photos:
        raise LookupError("no photos in the library; import some with `refpool photos import DIR`")
    endpoints = llm.Endpoints(max_concurrency=concurrency)
    coders, the_critic = _build(generators, critic, models_file, endpoints)
    jobs = _jobs(store, photos, coders, candidates, seed)
    run_id = store.insert(
        "runs",
        {
            "config": {
                "photo_ids": [p.id for p in photos],
                "generators": list(coders),
                "candidates": candidates,
                "rounds": rounds,
                "concurrency": concurrency,
                "seed": seed,
                "critic": critic,
            }
        },
    )
    started = time.monotonic()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(jobs) * rounds, desc="generate", unit="round", leave=True)
    own_renderer = None
    try:
        if renderer is None:
            from renderer import RenderConfig, Renderer

            own_renderer = Renderer(RenderConfig())
            await own_renderer.start()
            renderer = own_renderer
        ctx = _Ctx(store, renderer, coders, the_critic, run_id, bar, [])
        # K requests in flight per endpoint; twice as many chains, so that while K chains wait
        # on a model the others render (wall ~ max(model time / K, render time), not the sum).
        gate = asyncio.Semaphore(concurrency * 2)

        async def run_chain(job: Job) -> None:
            async with gate:
                await _chain(ctx, job, rounds)

        await asyncio.gather(*(run_chain(job) for job in jobs))
    finally:
        if bar is not None:
            bar.close()
        if own_renderer is not None:
            await own_renderer.close()
        await endpoints.close()
        with store.write_lock:
            store.db.execute(
                "UPDATE runs SET finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
                (run_id,),
            )
    summary = summarise(store, jobs, rounds)
    summary |= {"run_id": run_id, "wall_s": round(time.monotonic() - started, 2)}
    summary["new"] = len(ctx.new_rows)
    return summary


def _build(generators, critic, models_file, endpoints):
    models = None
    coders: dict = {}
    for name in generators:
        if name == "procedural":
            coders[name] = ProceduralCoder()
            continue
        models = models if models is not None else llm.load_models(models_file)
        if name not in models:
            raise ValueError(
                f"unknown generator {name!r}; choose procedural or one of"
                f" {', '.join(sorted(models))} (models file: --models-file / $REFPOOL_MODELS)"
            )
        models[name].api_key()  # fail now, with the variable's name, not mid-run
        coders[name] = ModelCoder(models[name], endpoints)
    if critic == "heuristic":
        return coders, HeuristicCritic()
    models = models if models is not None else llm.load_models(models_file)
    if critic not in models:
        raise ValueError(f"unknown critic {critic!r}; use heuristic or one of {sorted(models)}")
    models[critic].api_key()
    return coders, VLMCritic(models[critic], endpoints)


def _jobs(store, photos, coders, candidates, seed) -> list[Job]:
    jobs = []
    for photo in photos:
        path = photo_file(store, photo)
        analysis = analyse_path(str(path))
        jpeg = path.read_bytes()
        for name, coder in coders.items():
            for slot in range(candidates):
                chain_seed = (seed * 1_000_003 + photo.id * 7919 + slot * 104_729) % 2**31
                temperature = None
                if isinstance(coder, ModelCoder):
                    temperature = random.Random(chain_seed).choice(coder.cfg.temperatures)
                jobs.append(Job(photo, analysis, jpeg, name, slot, chain_seed, temperature))
    return jobs


async def _chain(ctx: _Ctx, job: Job, rounds: int) -> None:
    prev: Previous | None = None
    parent_id: int | None = None
    for round_ in range(rounds):
        key = job.key(round_)
        row = _row(ctx.store, key)
        if row is not None and row["outcome"] not in TRANSIENT:
            prev, parent_id = _previous(ctx.store, row), row["id"]
            if ctx.bar is not None:
                ctx.bar.update(1)
            continue
        stored = row["outcome"] if row is not None else None
        png = _stored_png(ctx.store, row) if stored == "critic_error" else None
        if png:  # only the critique failed: keep the program and its render
            cid, prev = await _recritique(ctx, job, round_, row, png)
        elif stored in ("infra_error", "critic_error") and row["program_sha"]:
            # the coder's reply is kept (never asked for twice); its outcome is re-derived from it
            source = ctx.store.program_source(row["program_sha"])
            outcome = coder_outcome(ctx.store, row["coder_call_id"])
            cid, prev = await _finish(ctx, job, round_, key, source, outcome, row["coder_call_id"],
                                      parent_id, existing=row["id"])  # fmt: skip
        else:
            draft = await ctx.coders[job.generator].write(ctx.store, job, round_, prev)
            cid, prev = await _finish(ctx, job, round_, key, draft.program, draft.outcome,
                                      draft.call_id, parent_id, existing=row["id"] if row else None)  # fmt: skip
        if ctx.bar is not None:
            ctx.bar.update(1)
        if prev is None:  # transport, infrastructure or critic failure: stop; a rerun resumes
            if ctx.bar is not None:
                ctx.bar.update(rounds - round_ - 1)
            return
        parent_id = cid


async def _render(renderer, source: str, seed: int) -> Render:
    if inspect.iscoroutinefunction(renderer.render):
        return await renderer.render(source, seed=seed, profile=PROFILE)
    return await asyncio.to_thread(renderer.render, source, seed, PROFILE)


async def _finish(ctx, job, round_, key, program, outcome, call_id, parent_id, existing=None):
    """Render, critique and store one round; returns (candidate id, Previous or None)."""
    store = ctx.store
    row: dict[str, Any] = {
        "job_key": key,
        "run_id": ctx.run_id,
        "photo_id": job.photo.id,
        "generator": job.generator,
        "round": round_,
        "seed": job.seed,
        "parent_id": parent_id,
        "coder_call_id": call_id,
        "outcome": outcome,
        # explicit blanks, so a retried (transient) row never keeps stale values
        "program_sha": None,
        "render_id": None,
        "accepted": 0,
        "coverage": None,
        "png_sha": None,
        "infra_error": None,
        "critique": None,
        "critic_call_id": None,
    }
    violations: list[Violation] = []
    png = None
    render = None
    if program:
        row["program_sha"] = store.put_program(program)
        render = await _render(ctx.renderer, program, job.seed)
        if render.infra_error:  # our machinery failed, not the program: one more go
            render = await _render(ctx.renderer, program, job.seed)
        row["render_id"] = store.record_render(render)
        if render.infra_error:
            row |= {"outcome": "infra_error", "infra_error": render.infra_error}
        else:
            violations = list(render.gate.violations)
            png = render.png
            row |= {
                "accepted": int(render.accepted),
                "coverage": render.gate.coverage,
                "png_sha": sha256_bytes(png) if png else None,
            }
    elif outcome in OUTCOME_FEEDBACK:
        violations = [OUTCOME_FEEDBACK[outcome]]
    row["violations"] = [v.to_dict() for v in violations]
    verdict = None
    if row["outcome"] not in TRANSIENT:
        verdict = await _judge(ctx, job, round_, row, png, violations)
    cid = _save(store, row, existing)
    ctx.new_rows.append(cid)
    if verdict is None:
        return cid, None
    return cid, Previous(round_, program, png, verdict.critique, violations, verdict.measures,
                         bool(row.get("accepted")))  # fmt: skip


async def _judge(ctx, job, round_, row: dict, png, violations):
    """Critique a rendered round into `row`; None (and outcome critic_error) if the call failed."""
    verdict = await ctx.critic.judge(ctx.store, job, round_, png, violations)
    row["critic_call_id"] = verdict.call_id
    if verdict.error:  # the critique never happened: do not store a stand-in as if it had
        row |= {"outcome": "critic_error", "critique": None}
        return None
    row["critique"] = verdict.critique.to_dict()
    return verdict


async def _recritique(ctx, job, round_, stored, png: bytes):
    """Redo only the critique of a critic_error round: its program and render are kept."""
    program = ctx.store.program_source(stored["program_sha"])
    violations = [Violation.from_dict(v) for v in json.loads(stored["violations"] or "[]")]
    row = {"job_key": stored["job_key"], "run_id": ctx.run_id}
    row["outcome"] = coder_outcome(ctx.store, stored["coder_call_id"])
    verdict = await _judge(ctx, job, round_, row, png, violations)
    cid = _save(ctx.store, row, stored["id"])
    ctx.new_rows.append(cid)
    if verdict is None:
        return cid, None
    return cid, Previous(round_, program, png, verdict.critique, violations, verdict.measures,
                         bool(stored["accepted"]))  # fmt: skip


def _save(store: Store, row: dict, existing: int | None) -> int:
    if existing is None:
        return store.insert("candidates", row)
    values = {k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in row.items()}
    values.pop("job_key")
    sets = ", ".join(f"{k} = ?" for k in values)
    with store.write_lock:
        store.db.execute(f"UPDATE candidates SET {sets} WHERE id = ?", [*values.values(), existing])
    return existing


def _stored_png(store: Store, row) -> bytes | None:
    if row["png_sha"]:
        with contextlib.suppress(OSError):
            return store.png_path(row["png_sha"]).read_bytes()
    return None


def _row(store: Store, key: str):
    rows = store.query("SELECT * FROM candidates WHERE job_key = ?", (key,))
    return rows[0] if rows else None


def _previous(store: Store, row) -> Previous:
    """Rebuild a finished round from the store (for a resumed chain)."""
    png = _stored_png(store, row)
    program = store.program_source(row["program_sha"]) if row["program_sha"] else None
    critique = Critique.from_dict(json.loads(row["critique"])) if row["critique"] else None
    violations = [Violation.from_dict(v) for v in json.loads(row["violations"] or "[]")]
    measures: dict = {}
    if png:
        from generators.critics import measure

        photo = get_photo(store, row["photo_id"])
        measures = measure(analyse_path(str(photo_file(store, photo))), png)
    return Previous(
        row["round"], program, png, critique, violations, measures, bool(row["accepted"])
    )


# -- summaries -------------------------------------------------------------------------------
def summarise(store: Store, jobs: list[Job], rounds: int) -> dict:
    """Per generator: candidates, accepted, rejected, infra_errors, pass rate per round, ..."""
    keys = {job.key(r): job.generator for job in jobs for r in range(rounds)}
    rows = _rows_for(store, "candidates", keys)
    calls = _rows_for(store, "model_calls", {**keys, **{k + "/critic": g for k, g in keys.items()}})
    models: dict[str, dict] = {}
    for name in dict.fromkeys(job.generator for job in jobs):
        mine = [r for r in rows if keys[r["job_key"]] == name]
        done = [r for r in mine if r["outcome"] not in TRANSIENT]
        coder_calls = [
            c for c in calls if c["purpose"] == "coder" and keys.get(c["job_key"]) == name
        ]
        failures = Counter(r["outcome"] for r in mine if r["outcome"] != "ok")
        failures["gate"] = sum(1 for r in mine if r["outcome"] == "ok" and not r["accepted"])
        by_round = defaultdict(list)
        for r in done:
            by_round[r["round"]].append(r["accepted"])
        accepted = [r for r in done if r["accepted"]]  # a critic_error round is not finished
        models[name] = {
            "candidates": len(mine),
            "accepted": len(accepted),
            "rejected": len(done) - len(accepted),
            "infra_errors": sum(1 for r in mine if r["outcome"] == "infra_error"),
            "transport_errors": sum(1 for r in mine if r["outcome"] in ("http_error", "timeout")),
            "pending": sum(1 for g in keys.values() if g == name) - len(done),
            "calls": len(coder_calls),
            "prompt_tokens": sum(c["prompt_tokens"] or 0 for c in coder_calls),
            "completion_tokens": sum(c["completion_tokens"] or 0 for c in coder_calls),
            "pass_rate_by_round": {
                str(k): round(sum(v) / len(v), 3) for k, v in sorted(by_round.items())
            },
            "mean_coverage": round(sum(r["coverage"] for r in accepted) / len(accepted), 4)
            if accepted
            else None,
            "failures": {k: v for k, v in sorted(failures.items()) if v},
        }
    return {"models": models, "photos": len({j.photo.id for j in jobs}), "rounds": rounds}


def _rows_for(store: Store, table: str, keys: dict) -> list:
    out = []
    names = list(keys)
    for i in range(0, len(names), 500):
        chunk = names[i : i + 500]
        marks = ",".join("?" for _ in chunk)
        out += store.query(f"SELECT * FROM {table} WHERE job_key IN ({marks})", tuple(chunk))
    return out


def format_summary(summary: dict) -> str:
    """The per-model table the CLI prints."""
    head = f"{'model':<22}{'cands':>6}{'ok':>5}{'rej':>5}{'infra':>6}{'calls':>6}{'tokens':>9}  {'pass by round':<18}{'cov':>6}  failures"
    lines = [head, "-" * len(head)]
    for name, m in summary["models"].items():
        passes = " ".join(f"{v:.0%}" for v in m["pass_rate_by_round"].values()) or "-"
        cov = f"{m['mean_coverage']:.2f}" if m["mean_coverage"] is not None else "-"
        tokens = m["prompt_tokens"] + m["completion_tokens"]
        fails = ", ".join(f"{k} {v}" for k, v in m["failures"].items()) or "-"
        lines.append(
            f"{name:<22}{m['candidates']:>6}{m['accepted']:>5}{m['rejected']:>5}"
            f"{m['infra_errors']:>6}{m['calls']:>6}{tokens:>9}  {passes:<18}{cov:>6}  {fails}"
        )
    total = sum(m["candidates"] for m in summary["models"].values())
    ok = sum(m["accepted"] for m in summary["models"].values())
    lines.append(
        f"{total} candidates ({summary.get('new', 0)} new this run), {ok} accepted,"
        f" {summary['photos']} photo(s), {summary['rounds']} round(s), {summary.get('wall_s', 0)} s"
    )
    return "\n".join(lines)


def list_candidates(store: Store) -> list[dict]:
    """Every candidate: id, photo, model, round, accepted, coverage, png path (or None)."""
    rows = store.query(
        "SELECT c.id, p.file_name AS photo, c.photo_id, c.generator, c.round, c.accepted,"
        " c.coverage, c.png_sha, c.outcome, c.parent_id FROM candidates c"
        " JOIN photos p ON p.id = c.photo_id ORDER BY c.id"
    )
    return [
        {
            "id": r["id"],
            "photo": r["photo"],
            "photo_id": r["photo_id"],
            "model": r["generator"],
            "round": r["round"],
            "accepted": bool(r["accepted"]),
            "coverage": r["coverage"],
            "png": str(store.png_path(r["png_sha"])) if r["png_sha"] else None,
            "outcome": r["outcome"],
            "parent_id": r["parent_id"],
        }
        for r in rows
    ]
