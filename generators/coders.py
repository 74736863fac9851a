"""Coders (write and revise programs) and critics (judge renders), behind one small interface.

* ProceduralCoder: the embedded default (generators/procedural.py), no model, no network.
* ModelCoder: an OpenAI-compatible model; images if the model accepts them, else the brief.
* HeuristicCritic / VLMCritic: see generators/critics.py.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from generators import critics, llm, procedural
from generators.analysis import Analysis
from refpool.contracts import Critique, Photo, Violation
from refpool.store import Store
from renderer import extract_program
from renderer.profiles import CODES

# How a failed reply is fed back to the model as a violation it can act on.
OUTCOME_FEEDBACK = {
    "no_code": Violation("no_code_block", CODES["no_code_block"]),
    "truncated": Violation("truncated", CODES["truncated"] + " Keep the sketch shorter."),
    "empty_reasoning": Violation(
        "no_code_block",
        "Your reply was reasoning only, with empty content: the token budget ran out."
        " Think briefly and put the whole sketch in one ```js block.",
    ),
    "refusal": Violation(
        "no_code_block", "The reply declined the task. Paint the flower: send a ```js sketch."
    ),
}


@dataclass
class Job:
    """One chain of rounds: a photo, a generator, a slot."""

    photo: Photo
    analysis: Analysis
    photo_jpeg: bytes
    generator: str
    slot: int
    seed: int
    temperature: float | None = None

    def key(self, round_: int) -> str:
        return (
            f"photo{self.photo.sha256[:16]}/{self.generator}/slot{self.slot}"
            f"/seed{self.seed}/round{round_}"
        )


@dataclass
class Previous:
    """What a revision starts from: the parent round."""

    round: int
    program: str | None
    png: bytes | None
    critique: Critique | None
    violations: list[Violation] = field(default_factory=list)
    measures: dict = field(default_factory=dict)
    accepted: bool = False


@dataclass
class Draft:
    program: str | None
    outcome: str
    call_id: int | None = None


class ProceduralCoder:
    name = "procedural"

    async def write(self, store: Store, job: Job, round_: int, prev: Previous | None) -> Draft:
        subject = job.photo.subject or "flower"
        if prev is None or not prev.program:
            source = procedural.generate_program(job.analysis, job.seed + round_, subject)
        else:
            source = procedural.revise_program(
                prev.program, job.analysis, prev.measures, round_, prev.violations
            )
        return Draft(source, "ok")


class ModelCoder:
    def __init__(self, cfg: llm.ModelConfig, endpoints: llm.Endpoints) -> None:
        self.cfg = cfg
        self.name = cfg.name
        self.endpoints = endpoints

    def messages(self, job: Job, round_: int, prev: Previous | None) -> list[dict]:
        subject = job.photo.subject or "flower"
        brief = job.analysis.brief()
        images = []
        if prev is None or not prev.program:
            note = (
                "The reference photo is attached."
                if self.cfg.accepts_images
                else "You cannot see the photo; paint from the analysis below."
            )
            text = llm.prompt("generate.md", subject=subject, photo_note=note, brief=brief)
            if prev is not None and prev.violations:  # a failed earlier round: say why
                text += "\n\nYour previous reply could not be used:\n" + _violation_lines(
                    prev.violations
                )
            if self.cfg.accepts_images:
                images = [llm.image_part(job.photo_jpeg, "image/jpeg")]
        else:
            if self.cfg.accepts_images and prev.png:
                render_note = "Attached: the reference photo, then the render of your sketch."
                images = [
                    llm.image_part(job.photo_jpeg, "image/jpeg"),
                    llm.image_part(prev.png, "image/png"),
                ]
            else:
                render_note = (
                    "Render measurements: " + critics_summary(prev)
                    if prev.png
                    else "Your sketch produced no image."
                )
            critique = prev.critique
            text = llm.prompt(
                "revise.md",
                subject=subject,
                round=round_ + 1,
                program=prev.program.strip(),
                render_note=render_note,
                gate_summary="accepted" if prev.accepted else "rejected",
                violations=_violation_lines(prev.violations) or "(no violations)",
                scores=json.dumps(critique.scores) if critique else "(none)",
                advice=critique.advice if critique else "(none)",
                brief=brief,
            )
        user: str | list = [{"type": "text", "text": text}, *images] if images else text
        return [
            {"role": "system", "content": llm.prompt("system.md")},
            {"role": "user", "content": user},
        ]

    async def write(self, store: Store, job: Job, round_: int, prev: Previous | None) -> Draft:
        key = job.key(round_)
        reused = _paid_reply(store, key)
        if reused is not None:  # a crash after the model answered: do not pay twice
            outcome, program = llm.classify(reused[1], extract_program)
            return Draft(program, outcome, reused[0])
        result = await llm.chat(
            store,
            self.endpoints,
            self.cfg,
            self.messages(job, round_, prev),
            purpose="coder",
            temperature=job.temperature
            if job.temperature is not None
            else self.cfg.temperatures[0],
            job_key=key,
        )
        outcome, program = llm.classify(result, extract_program)
        return Draft(program, outcome, result.call_id)


def _paid_reply(
    store: Store, key: str, purpose: str = "coder"
) -> tuple[int, llm.ChatResult] | None:
    """The latest reply already paid for under this job key, as the chat call returned it."""
    rows = store.query(
        "SELECT * FROM model_calls WHERE job_key = ? AND purpose = ? AND outcome = 'ok'"
        " ORDER BY id DESC LIMIT 1",
        (key, purpose),
    )
    return (rows[0]["id"], _stored_result(rows[0])) if rows else None


def _stored_result(row) -> llm.ChatResult:
    return llm.ChatResult(
        outcome=row["outcome"],
        content=row["response"] or "",
        reasoning=row["reasoning"] or "",
        finish_reason=row["finish_reason"],
        refusal=row["refusal"],
        call_id=row["id"],
        error=row["error"],
    )


def coder_outcome(store: Store, call_id: int | None) -> str:
    """How a stored coder reply classifies (ok, truncated, ...); 'ok' when there was no call."""
    rows = store.query("SELECT * FROM model_calls WHERE id = ?", (call_id,)) if call_id else []
    return llm.classify(_stored_result(rows[0]), extract_program)[0] if rows else "ok"


def _violation_lines(violations: list[Violation]) -> str:
    return "\n".join(
        f"- [{v.code}] {v.message}" + (f" (line {v.line})" if v.line else "") for v in violations
    )


def critics_summary(prev: Previous) -> str:
    m = prev.measures or {}
    keys = ("coverage", "palette_distance", "silhouette_iou", "edge_softness", "layering", "centre")
    return ", ".join(f"{k} {m[k]}" for k in keys if k in m) or "(not measured)"


# -- critics ---------------------------------------------------------------------------------
@dataclass
class Verdict:
    critique: Critique
    measures: dict
    call_id: int | None = None
    error: str | None = None  # the critic call failed in transport: no critique happened


class HeuristicCritic:
    name = "heuristic"

    async def judge(self, store: Store, job: Job, round_: int, png, violations) -> Verdict:
        critique, measures = await asyncio.to_thread(
            critics.heuristic_critique, job.analysis, png, violations
        )
        return Verdict(critique, measures)


class VLMCritic:
    """A vision model critic; falls back to the heuristic critique if its reply is unusable.

    A failed call (http_error/timeout after retries) is not papered over: the verdict carries
    `error` and the round is stored as critic_error, which a rerun critiques again.
    """

    def __init__(self, cfg: llm.ModelConfig, endpoints: llm.Endpoints) -> None:
        if not cfg.accepts_images:
            raise ValueError(f"critic {cfg.name!r} must accept images (accepts_images: true)")
        self.cfg, self.endpoints, self.name = cfg, endpoints, cfg.name

    async def judge(self, store: Store, job: Job, round_: int, png, violations) -> Verdict:
        heuristic, measures = await asyncio.to_thread(
            critics.heuristic_critique, job.analysis, png, violations
        )
        if not png:
            return Verdict(heuristic, measures)
        text = llm.prompt("critic.md", brief="Photo analysis:\n" + job.analysis.brief())
        messages = [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": text},
                    llm.image_part(job.photo_jpeg, "image/jpeg"),
                    llm.image_part(png, "image/png"),
                ],
            }
        ]
        key = job.key(round_) + "/critic"
        reused = _paid_reply(store, key, "critic")
        if reused is not None:  # a crash after the critic answered: do not pay twice
            result = reused[1]
        else:
            extra = {"response_format": {"type": "json_object"}} if self.cfg.json_mode else None
            result = await llm.chat(store, self.endpoints, self.cfg, messages, purpose="critic",
                                    temperature=0.2, extra=extra, job_key=key)  # fmt: skip
        if result.outcome != "ok":  # no reply at all: the round waits for a rerun to critique it
            error = f"VLM critic {self.cfg.name}: {result.outcome} ({result.error or 'no detail'})"
            return Verdict(heuristic, measures, result.call_id, error=error)
        try:
            critique = critics.parse_critique(result.content, self.cfg.name)
        except (ValueError, TypeError, AttributeError) as exc:
            note = f"(VLM critic {self.cfg.name} reply unusable: {exc}; heuristic critique used)"
            critique = Critique(
                heuristic.critic, heuristic.scores, heuristic.advice, f"{heuristic.summary} {note}"
            )
        return Verdict(critique, measures, result.call_id)
