"""What a batch made, as the CLI shows it: the per-model summary and the candidates list."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from generators.jobs import TRANSIENT, Job
from generators.llm import explain
from generators.recorded import INTERRUPTED
from generators.served import served_elsewhere, served_line
from refpool.core import finish
from refpool.core.contracts import Candidate, ModelCall
from refpool.core.store import Store, candidates, model_calls
from refpool.core.store.photos import get_photos


def summarise(store: Store, jobs: list[Job], rounds: int) -> dict[str, Any]:
    """Per generator: candidates, accepted, rejected, infra_errors, pass rate per round, ..."""
    keys = {job.key(r): job.generator for job in jobs for r in range(rounds)}
    made = candidates.by_job_keys(store, keys)
    calls = model_calls.by_job_keys(store, [*keys, *(key + "/critic" for key in keys)])
    by_id = {call.id: call for call in calls}
    models: dict[str, dict[str, Any]] = {}
    critic_failed: list[Candidate] = []
    for name in dict.fromkeys(job.generator for job in jobs):
        mine = [c for c in made if keys[c.job_key] == name]
        done = [c for c in mine if c.outcome not in TRANSIENT]
        coder_calls = [
            call
            for call in calls
            if call.purpose == "coder" and keys.get(call.job_key or "") == name
        ]
        coded = ("ok", "reasoning_code")  # reasoning_code: the sketch came from the reasoning
        failures = Counter(c.outcome for c in mine if c.outcome not in coded)
        failures["gate"] = sum(1 for c in mine if c.outcome in coded and not c.accepted)
        by_round: dict[int, list[bool]] = defaultdict(list)
        for c in done:
            by_round[c.round].append(c.accepted)
        accepted = [c for c in done if c.accepted]  # a critic_error round is not finished
        critic_failed += [c for c in mine if c.outcome == "critic_error"]
        models[name] = {
            "candidates": len(mine),
            "accepted": len(accepted),
            "rejected": len(done) - len(accepted),
            "infra_errors": sum(1 for c in mine if c.outcome == "infra_error"),
            "transport_errors": sum(1 for c in mine if c.outcome in ("http_error", "timeout")),
            "pending": sum(1 for g in keys.values() if g == name) - len(done),
            "calls": len(coder_calls),
            # requests a Ctrl-C stopped in flight: recorded, never paid for as replies, asked again
            "interrupted": sum(1 for call in coder_calls if call.outcome == INTERRUPTED),
            "prompt_tokens": sum(call.prompt_tokens or 0 for call in coder_calls),
            "completion_tokens": sum(call.completion_tokens or 0 for call in coder_calls),
            "pass_rate_by_round": {
                str(k): round(sum(v) / len(v), 3) for k, v in sorted(by_round.items())
            },
            "mean_coverage": _mean_coverage(accepted),
            "failures": {k: v for k, v in sorted(failures.items()) if v},
            "from_reasoning": sum(1 for c in mine if c.outcome == "reasoning_code"),
            # a VLM critic's reply that could not be read: the heuristic critique stood in
            "critic_fallbacks": sum(
                1
                for c in mine
                if c.critic_call_id and c.critique is not None and c.critique.critic == "heuristic"
            ),
            # what the vendor said for each round it failed: each distinct error, counted
            "errors": _errors(
                [c for c in mine if c.outcome in ("http_error", "timeout")], by_id, "coder"
            ),
            "served_by": _served(coder_calls),  # replies another model served (a fallback)
        }
    critic_calls = [call for call in calls if call.purpose == "critic" and call.outcome == "ok"]
    critic_stopped = [c for c in calls if c.purpose == "critic" and c.outcome == INTERRUPTED]
    return {
        "critic_interrupted": len(critic_stopped),
        "models": models,
        "critic_errors": _errors(critic_failed, by_id, "critic"),
        "critic_served_by": _served(critic_calls),
        # critic replies cut by max_tokens: their JSON was read as far as it went
        "critic_cut": sum(
            finish.finish_meaning(c.finish_reason) == finish.LENGTH for c in critic_calls
        ),
        "photos": len({j.photo.id for j in jobs}),
        "rounds": rounds,
    }


def _errors(
    failed: list[Candidate], by_id: dict[int | None, ModelCall], role: str
) -> list[dict[str, Any]]:
    """[{error, rounds}] for failed rounds, from the last call of each (keys already scrubbed
    when it was recorded), with what the user can do about it."""
    said: Counter[str] = Counter()
    for c in failed:
        call = by_id.get(c.coder_call_id if role == "coder" else c.critic_call_id)
        if call is not None and call.error:
            said[explain(call.error, call.http_status)] += 1
    return [{"error": e, "rounds": n} for e, n in said.most_common()]


def _served(calls: list[ModelCall]) -> list[dict[str, Any]]:
    """[{requested, served, replies}] for replies a different model than requested served."""
    found = served_elsewhere(call for call in calls if call.outcome == "ok")
    return [{"requested": r, "served": s, "replies": n} for (r, s), n in found.most_common()]


def _mean_coverage(accepted: list[Candidate]) -> float | None:
    if not accepted:
        return None
    return round(sum(c.coverage or 0.0 for c in accepted) / len(accepted), 4)


def format_summary(summary: dict[str, Any]) -> str:
    """The per-model table the CLI prints."""
    head = (
        f"{'model':<22}{'cands':>6}{'ok':>5}{'rej':>5}{'infra':>6}{'calls':>6}{'tokens':>9}"
        f"  {'pass by round':<18}{'cov':>6}{'fallbk':>7}  failures"
    )
    lines = [head, "-" * len(head)]
    for name, m in summary["models"].items():
        passes = " ".join(f"{v:.0%}" for v in m["pass_rate_by_round"].values()) or "-"
        cov = f"{m['mean_coverage']:.2f}" if m["mean_coverage"] is not None else "-"
        tokens = m["prompt_tokens"] + m["completion_tokens"]
        fails = ", ".join(f"{k} {v}" for k, v in m["failures"].items()) or "-"
        if m.get("from_reasoning"):
            fails += f" (code from reasoning: {m['from_reasoning']})"
        lines.append(
            f"{name:<22}{m['candidates']:>6}{m['accepted']:>5}{m['rejected']:>5}"
            f"{m['infra_errors']:>6}{m['calls']:>6}{tokens:>9}  {passes:<18}{cov:>6}"
            f"{m.get('critic_fallbacks', 0):>7}  {fails}"
        )
    total = sum(m["candidates"] for m in summary["models"].values())
    ok = sum(m["accepted"] for m in summary["models"].values())
    lines.append(
        f"{total} candidates ({summary.get('new', 0)} new this run), {ok} accepted,"
        f" {summary['photos']} photo(s), {summary['rounds']} round(s), {summary.get('wall_s', 0)} s"
    )
    stopped = sum(m.get("interrupted", 0) for m in summary["models"].values())
    stopped += summary.get("critic_interrupted", 0)
    if stopped:
        lines.append(
            f"interrupted: {stopped} request(s) were in flight when a run was stopped (Ctrl-C);"
            " each is recorded with its prompt and wait, none was paid for as a reply, and each"
            " is asked again (`refpool candidates list` shows what is still pending)"
        )
    render = summary.get("render") or {}
    if render.get("infra_retries"):
        lines.append(
            f"renderer: {render['infra_retries']} attempt(s) failed on our side and were retried"
            f" ({render.get('browser_restarts', 0)} browser restart(s)); none is charged to a"
            " program, and a round still failing is `infra`, asked again on the next run"
        )
    if any(m.get("critic_fallbacks") for m in summary["models"].values()):
        lines.append("fallbk: critic replies that could not be read (heuristic critique used)")
    return "\n".join(lines + provenance_lines(summary))


def provenance_lines(summary: dict[str, Any]) -> list[str]:
    """What the servers did that the table does not show: replies another model served, and
    critic replies cut by max_tokens."""
    served = [
        (f"coder {name}", s)
        for name, m in summary["models"].items()
        for s in m.get("served_by", [])
    ]
    served += [("critic", s) for s in summary.get("critic_served_by", [])]
    lines = [served_line(who, s["requested"], s["served"], s["replies"]) for who, s in served]
    cut = summary.get("critic_cut", 0)
    if cut:
        lines.append(
            f"critic reply cut by max_tokens ({cut} round{'s' if cut != 1 else ''}): advice"
            " partial/lost, the scores kept as far as they came; raise max_tokens for the"
            " critic in the models file"
        )
    return lines


def problems(summary: dict[str, Any]) -> list[str]:
    """What stopped part of a run and needs the user: disabled models, each distinct error a
    model's failed rounds ended with (once: not again if a disabled model's line said it),
    chains a bug stopped."""
    out = list(summary.get("disabled", {}).values())
    failed = [
        (f"coder {name}", e) for name, m in summary["models"].items() for e in m.get("errors", [])
    ]
    failed += [("critic", e) for e in summary.get("critic_errors", [])]
    for who, e in failed:
        vendor_said = e["error"].split(" (", 1)[0]
        if not any(vendor_said in line for line in out):
            rounds = f"{e['rounds']} round{'s' if e['rounds'] != 1 else ''}"
            out.append(f"{who}: {rounds} failed: {e['error']}")
    out += [f"a chain stopped on an unexpected error: {e}" for e in summary.get("chain_errors", [])]
    return out


def list_candidates(store: Store) -> list[dict[str, Any]]:
    """Every candidate: id, photo, model, round, accepted, coverage, png path (or None).

    The dicts are the JSON of `refpool candidates list --json`: keep their keys stable.
    """
    made = candidates.list_candidates(store)
    photos = get_photos(store, {c.photo_id for c in made})
    calls = model_calls.by_ids(store, [c.coder_call_id for c in made if c.coder_call_id])
    return [
        {
            "id": c.id,
            "photo": photos[c.photo_id].file_name,
            "photo_id": c.photo_id,
            "model": c.generator,
            "round": c.round,
            "accepted": c.accepted,
            "coverage": c.coverage,
            "png": str(store.png_path(c.png_sha)) if c.png_sha else None,
            "outcome": c.outcome,
            "parent_id": c.parent_id,
            # the model id asked for, and the one the server said wrote it (null: procedural,
            # or the server did not say); a router's fallback makes them differ
            **_coder_models(calls.get(c.coder_call_id or -1)),
        }
        for c in made
        if c.photo_id in photos  # as the join on photos did: a candidate needs its photo
    ]


def _coder_models(call: ModelCall | None) -> dict[str, str | None]:
    if call is None:
        return {"requested_model": None, "served_model": None}
    return {"requested_model": call.model, "served_model": call.served_model}
