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
from dataclasses import dataclass, field, replace
from typing import Any

from generators import llm
from generators.analysis import analyse_path
from generators.build import Coder, Critic, build
from generators.coders import ModelCoder, Reply, coder_outcome, feedback
from generators.critics import CritiqueResult, measure
from generators.jobs import TRANSIENT, Job, Previous
from generators.summary import summarise
from refpool.core.contracts import Candidate, Photo, Render, RoundResult, Violation
from refpool.core.defaults import GATE_PROFILE, ROUNDS
from refpool.core.errors import InputError, NotFound
from refpool.core.seeds import derive_seed
from refpool.core.store import Store, photo_corrections, sha256_bytes
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

    `renderer` may be an async `renderer.Renderer` (used on this loop), a
    `renderer.client.RenderClient` (a render service, with the same `render`), a
    `SyncRenderer` (called from worker threads) or None (a Renderer is started and closed here).
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
        raise InputError("candidates, rounds and concurrency must each be at least 1")
    if photo_ids:
        photos = [get_photo(store, i) for i in photo_ids]
    else:  # the library, less the photos withdrawn (`refpool photos withdraw`)
        gone = photo_corrections.withdrawn(store)
        photos = [p for p in list_photos(store) if p.id not in gone]
    if not photos:
        raise NotFound("no photos in the library; import some with `refpool photos import DIR`")
    endpoints = llm.Endpoints(max_concurrency=concurrency, retry_failed=retry_failed)
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
        render_state = _render_state(ctx.renderer)  # before closing: its stats go with it
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
    summary["adapted"] = {name: list(made) for name, made in endpoints.adaptations.items()}
    summary["chain_errors"] = ctx.chain_errors
    summary["render"] = render_state
    return summary


def _render_state(renderer: Any) -> dict[str, Any]:
    """What the renderer's own realm did in this run: infrastructure attempts that failed
    and were retried (never charged to a program), and why it is down, if it could not be
    brought back. A SyncRenderer wraps the Renderer; a RenderClient knows neither."""
    inner = getattr(renderer, "renderer", renderer)
    stats = getattr(inner, "stats", None) or {}
    return {
        "infra_retries": int(stats.get("infra_retries", 0)),
        "browser_restarts": int(stats.get("browser_restarts", 0)),
        "renderer_down": getattr(inner, "broken", None),
    }


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
    result = RoundResult(
        job_key=job.key(round_),
        run_id=ctx.run_id,
        photo_id=job.photo.id,
        generator=job.generator,
        round=round_,
        seed=job.seed,
        outcome=reply.outcome,
        parent_id=parent_id,
        coder_call_id=reply.call_id,
    )
    violations: list[Violation] = []
    png = None
    if reply.program:
        program_sha = store.put_program(reply.program)
        render = await _render(ctx.renderer, reply.program, job.seed)
        if render.infra_error:  # our machinery failed, not the program: one more go
            render = await _render(ctx.renderer, reply.program, job.seed)
        result = replace(result, program_sha=program_sha, render_id=store.record_render(render))
        if render.infra_error:
            result = replace(result, outcome="infra_error", infra_error=render.infra_error)
        else:
            violations = list(render.gate.violations)
            png = render.png
            png_sha = sha256_bytes(png) if png else None
            result = replace(
                result, accepted=render.accepted, coverage=render.gate.coverage, png_sha=png_sha
            )
    elif (why := feedback(reply.outcome, reply.finish_reason)) is not None:
        violations = [why]
    result = replace(result, violations=violations)
    critique = None
    if result.outcome not in TRANSIENT:
        result, critique = await _critique(ctx, job, round_, result, png)
    cid = candidate_store.save_round(store, result, existing)
    ctx.new_ids.append(cid)
    if critique is None:
        return cid, None
    return cid, Previous(
        round_,
        reply.program,
        png,
        critique.critique,
        violations,
        critique.measures,
        result.accepted,
    )


async def _critique(
    ctx: _Ctx, job: Job, round_: int, result: RoundResult, png: bytes | None
) -> tuple[RoundResult, CritiqueResult | None]:
    """Critique a rendered round; (outcome critic_error, None) if the call failed."""
    done = await ctx.critic.judge(ctx.store, job, round_, png, list(result.violations))
    result = replace(result, critic_call_id=done.call_id)
    if done.error:  # the critique never happened: do not store a stand-in as if it had
        return replace(result, outcome="critic_error", critique=None), None
    return replace(result, critique=done.critique), done


async def _recritique(
    ctx: _Ctx, job: Job, round_: int, stored: Candidate, png: bytes
) -> tuple[int, Previous | None]:
    """Redo only the critique of a critic_error round: its program and render are kept."""
    program = ctx.store.program_source(stored.program_sha) if stored.program_sha else None
    outcome = coder_outcome(ctx.store, stored.coder_call_id)
    result = replace(RoundResult.of(stored), run_id=ctx.run_id, outcome=outcome)
    result, critique = await _critique(ctx, job, round_, result, png)
    cid = candidate_store.save_round(ctx.store, result, stored.id)
    ctx.new_ids.append(cid)
    if critique is None:
        return cid, None
    return cid, Previous(
        round_,
        program,
        png,
        critique.critique,
        stored.violations,
        critique.measures,
        stored.accepted,
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
