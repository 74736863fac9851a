"""The three-round loop and batch runs: photos x generators x slots, resumable, async.

Round 0 writes a program; rounds 1.. revise the previous program from its render, critique and
gate violations. Each finished round is one candidate (job_key = photo/generator/slot/seed/
round), saved before the next round starts, so a rerun skips it and `kill -9` loses nothing
finished. Rendering overlaps with model waits: every chain is its own task, model calls are
limited per endpoint and renders by the renderer's slots.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from generators import llm
from generators.analysis import analyse_path
from generators.build import Coder, Critic, build
from generators.coders import ModelCoder, Reply, coder_outcome, feedback
from generators.critics import Verdict, measure
from generators.jobs import TRANSIENT, Job, Previous
from generators.summary import summarise
from refpool.core.contracts import Candidate, Photo, Render, Violation
from refpool.core.defaults import GATE_PROFILE, ROUNDS
from refpool.core.seeds import derive_seed
from refpool.core.store import Store, sha256_bytes
from refpool.core.store import candidates as candidate_store
from refpool.core.store.photos import get_photo, list_photos, photo_file


@dataclass
class _Ctx:
    store: Store
    renderer: Any  # an async Renderer or a SyncRenderer (see `generate`)
    coders: dict[str, Coder]
    critic: Critic
    run_id: int
    bar: Any  # a tqdm progress bar, or None
    new_ids: list[int] = field(default_factory=list)  # candidates saved by this run
    chain_errors: list[str] = field(default_factory=list)  # chains a bug stopped (others go on)


def generate(
    store: Store,
    *,
    photo_ids: list[int] | None = None,
    generators: Sequence[str] = ("procedural",),
    candidates: int = 1,
    rounds: int = ROUNDS,
    concurrency: int = 4,
    seed: int = 0,
    renderer: Any = None,
    progress: bool = True,
    critic: str = "heuristic",
    models_file: str | None = None,
    retry_failed: bool = False,
) -> dict[str, Any]:
    """Run (or resume) a batch; returns the summary dict (see `generators.summary.summarise`).

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
            retry_failed=retry_failed,
        )
    )


async def generate_async(
    store: Store,
    *,
    photo_ids: list[int] | None = None,
    generators: Sequence[str] = ("procedural",),
    candidates: int = 1,
    rounds: int = ROUNDS,
    concurrency: int = 4,
    seed: int = 0,
    renderer: Any = None,
    progress: bool = True,
    critic: str = "heuristic",
    models_file: str | None = None,
    retry_failed: bool = False,
) -> dict[str, Any]:
    """`generate` inside a running event loop. `retry_failed`: call a critic again even
    though an earlier run saw it refuse permanently (a 4xx such as "image input not supported").
    """
    if candidates < 1 or rounds < 1 or concurrency < 1:
        raise ValueError("candidates, rounds and concurrency must each be at least 1")
    photos = [get_photo(store, i) for i in photo_ids] if photo_ids else list_photos(store)
    if not photos:
        raise LookupError("no photos in the library; import some with `refpool photos import DIR`")
    endpoints = llm.Endpoints(max_concurrency=concurrency)
    coders, the_critic = build(store, generators, critic, models_file, endpoints, retry_failed)
    jobs = _jobs(store, photos, coders, candidates, seed, rounds)
    config = {
        "photo_ids": [p.id for p in photos],
        "generators": list(coders),
        "candidates": candidates,
        "rounds": rounds,
        "concurrency": concurrency,
        "seed": seed,
        "critic": critic,
    }
    run_id = store.insert("runs", {"config": config})
    started = time.monotonic()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(jobs) * rounds, desc="generate", unit="round", leave=True)
    ctx = _Ctx(store, renderer, coders, the_critic, run_id, bar)
    own_renderer = None
    try:
        if renderer is None:
            from renderer import RenderConfig, Renderer

            own_renderer = Renderer(RenderConfig())
            await own_renderer.start()
            ctx.renderer = own_renderer
        # K requests in flight per endpoint; twice as many chains, so that while K chains wait
        # on a model the others render (wall ~ max(model time / K, render time), not the sum).
        gate = asyncio.Semaphore(concurrency * 2)

        async def run_chain(job: Job) -> None:
            async with gate:
                try:
                    await _chain(ctx, job, rounds)
                except Exception as exc:  # noqa: BLE001 - one chain's bug never stops the others
                    ctx.chain_errors.append(f"{job.key(0)}: {type(exc).__name__}: {exc}")

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
    summary["new"] = len(ctx.new_ids)
    summary["disabled"] = dict(endpoints.disabled)
    summary["chain_errors"] = ctx.chain_errors
    return summary


def _jobs(
    store: Store,
    photos: list[Photo],
    coders: dict[str, Coder],
    slots: int,
    seed: int,
    rounds: int,
) -> list[Job]:
    jobs = []
    for photo in photos:
        path = photo_file(store, photo)
        analysis = analyse_path(str(path))
        jpeg = path.read_bytes()
        for name, coder in coders.items():
            for slot in range(slots):
                # The photo's content, not its library id, so another library paints it alike.
                # No generator: slot k of every generator shares a seed, a paired comparison.
                chain_seed = derive_seed(seed, photo.sha256, slot)
                temperature = None
                if isinstance(coder, ModelCoder):
                    temperature = random.Random(chain_seed).choice(coder.cfg.temperatures)
                jobs.append(Job(photo, analysis, jpeg, name, slot, chain_seed, temperature, rounds))
    return jobs


async def _chain(ctx: _Ctx, job: Job, rounds: int) -> None:
    prev: Previous | None = None
    parent_id: int | None = None
    for round_ in range(rounds):
        stored = candidate_store.by_job_key(ctx.store, job.key(round_))
        if stored is not None and stored.outcome not in TRANSIENT:  # finished: build on it
            prev, parent_id = _previous(ctx.store, job, stored), stored.id
            _tick(ctx)
            continue
        png = (
            _stored_png(ctx.store, stored) if stored and stored.outcome == "critic_error" else None
        )
        if stored is not None and png:  # only the critique failed: keep the program and render
            cid, prev = await _recritique(ctx, job, round_, stored, png)
        elif stored and stored.outcome in ("infra_error", "critic_error") and stored.program_sha:
            # the coder's reply is kept (never asked for twice); its outcome is re-derived from it
            source = ctx.store.program_source(stored.program_sha)
            reply = Reply(
                source, coder_outcome(ctx.store, stored.coder_call_id), stored.coder_call_id
            )
            cid, prev = await _finish(ctx, job, round_, reply, parent_id, existing=stored.id)
        else:
            reply = await ctx.coders[job.generator].write(ctx.store, job, round_, prev)
            existing = stored.id if stored else None
            cid, prev = await _finish(ctx, job, round_, reply, parent_id, existing)
        _tick(ctx)
        if prev is None:  # transport, infrastructure or critic failure: stop; a rerun resumes
            _tick(ctx, rounds - round_ - 1)
            return
        parent_id = cid


def _tick(ctx: _Ctx, n: int = 1) -> None:
    if ctx.bar is not None:
        ctx.bar.update(n)


async def _render(renderer: Any, source: str, seed: int) -> Render:
    if inspect.iscoroutinefunction(renderer.render):
        return await renderer.render(source, seed=seed, profile=GATE_PROFILE)
    return await asyncio.to_thread(renderer.render, source, seed, GATE_PROFILE)


async def _finish(
    ctx: _Ctx, job: Job, round_: int, reply: Reply, parent_id: int | None, existing: int | None
) -> tuple[int, Previous | None]:
    """Render, critique and save one round; returns (candidate id, Previous or None)."""
    store = ctx.store
    fields: dict[str, Any] = {
        "job_key": job.key(round_),
        "run_id": ctx.run_id,
        "photo_id": job.photo.id,
        "generator": job.generator,
        "round": round_,
        "seed": job.seed,
        "parent_id": parent_id,
        "coder_call_id": reply.call_id,
        "outcome": reply.outcome,
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
    if reply.program:
        fields["program_sha"] = store.put_program(reply.program)
        render = await _render(ctx.renderer, reply.program, job.seed)
        if render.infra_error:  # our machinery failed, not the program: one more go
            render = await _render(ctx.renderer, reply.program, job.seed)
        fields["render_id"] = store.record_render(render)
        if render.infra_error:
            fields |= {"outcome": "infra_error", "infra_error": render.infra_error}
        else:
            violations = list(render.gate.violations)
            png = render.png
            fields |= {
                "accepted": int(render.accepted),
                "coverage": render.gate.coverage,
                "png_sha": sha256_bytes(png) if png else None,
            }
    elif (why := feedback(reply.outcome, reply.finish_reason)) is not None:
        violations = [why]
    fields["violations"] = [v.to_dict() for v in violations]
    verdict = None
    if fields["outcome"] not in TRANSIENT:
        verdict = await _judge(ctx, job, round_, fields, png, violations)
    cid = candidate_store.save(store, fields, existing)
    ctx.new_ids.append(cid)
    if verdict is None:
        return cid, None
    accepted = bool(fields["accepted"])
    return cid, Previous(
        round_, reply.program, png, verdict.critique, violations, verdict.measures, accepted
    )


async def _judge(
    ctx: _Ctx,
    job: Job,
    round_: int,
    fields: dict[str, Any],
    png: bytes | None,
    violations: list[Violation],
) -> Verdict | None:
    """Critique a rendered round into `fields`; None (outcome critic_error) if the call failed."""
    verdict = await ctx.critic.judge(ctx.store, job, round_, png, violations)
    fields["critic_call_id"] = verdict.call_id
    if verdict.error:  # the critique never happened: do not store a stand-in as if it had
        fields |= {"outcome": "critic_error", "critique": None}
        return None
    fields["critique"] = verdict.critique.to_dict()
    return verdict


async def _recritique(
    ctx: _Ctx, job: Job, round_: int, stored: Candidate, png: bytes
) -> tuple[int, Previous | None]:
    """Redo only the critique of a critic_error round: its program and render are kept."""
    program = ctx.store.program_source(stored.program_sha) if stored.program_sha else None
    fields: dict[str, Any] = {"job_key": stored.job_key, "run_id": ctx.run_id}
    fields["outcome"] = coder_outcome(ctx.store, stored.coder_call_id)
    verdict = await _judge(ctx, job, round_, fields, png, stored.violations)
    cid = candidate_store.save(ctx.store, fields, stored.id)
    ctx.new_ids.append(cid)
    if verdict is None:
        return cid, None
    return cid, Previous(
        round_, program, png, verdict.critique, stored.violations, verdict.measures, stored.accepted
    )


def _stored_png(store: Store, stored: Candidate) -> bytes | None:
    if stored.png_sha:
        with contextlib.suppress(OSError):
            return store.png_path(stored.png_sha).read_bytes()
    return None


def _previous(store: Store, job: Job, stored: Candidate) -> Previous:
    """Rebuild a finished round from the store (for a resumed chain)."""
    png = _stored_png(store, stored)
    program = store.program_source(stored.program_sha) if stored.program_sha else None
    measures = measure(job.analysis, png) if png else {}  # the job key names the photo
    return Previous(
        stored.round,
        program,
        png,
        stored.critique,
        list(stored.violations),
        measures,
        stored.accepted,
    )
