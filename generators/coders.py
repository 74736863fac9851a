"""Coders write and revise programs, behind one small interface: `write(...) -> Reply`.

* ProceduralCoder: the embedded default (generators/procedural.py), no model, no network.
* ModelCoder: an OpenAI-compatible model; images if the model accepts them, else the brief.

The critics that judge the renders are in generators/critics.py.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from generators import llm, procedural
from generators.jobs import Job, Previous
from refpool.core.contracts import Violation
from refpool.core.finish import LENGTH, finish_meaning
from refpool.core.seeds import derive_seed
from refpool.core.store import Store
from renderer import extract_program
from renderer.env_rules import ENV_EXTERNAL_ACCESS
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
# Empty content although the reply finished normally: the budget was not the problem.
EMPTY_ANSWER = Violation(
    "no_code_block",
    "Your reply's answer was empty: everything was in the reasoning. Put the whole sketch in"
    " the answer itself, in one ```js block.",
)


def feedback(outcome: str, finish_reason: str | None) -> Violation | None:
    """The violation that tells the model why its reply could not be used (None: it could)."""
    if (
        outcome == "empty_reasoning"
        and finish_reason is not None
        and finish_meaning(finish_reason) != LENGTH
    ):
        return EMPTY_ANSWER
    return OUTCOME_FEEDBACK.get(outcome)


# How much of a previous program a revise prompt sends back: a runaway reply (megabytes of a
# repeated loop) is cut, and the prompt says so, instead of being paid for again as input.
REVISE_PROGRAM_CHARS = 20_000


def program_for_revision(program: str, limit: int = REVISE_PROGRAM_CHARS) -> str:
    """The previous program as a revise prompt shows it: whole, or cut at a line and marked."""
    program = program.strip()
    if len(program) <= limit:
        return program
    head = program[:limit]
    head = head[: head.rfind("\n")] if "\n" in head else head
    return (
        f"{head}\n// [cut: your sketch was {len(program)} characters; only the first"
        f" {len(head)} are shown. Send a complete sketch far shorter than this.]"
    )


async def classify_off_loop(result: llm.ChatResult) -> tuple[str, str | None]:
    """`llm.classify` in a thread: finding the program runs the static pass on its drafts,
    which must never hold up the renders sharing this event loop."""
    return await asyncio.to_thread(llm.classify, result, extract_program)


@dataclass
class Reply:
    """A coder's answer for one round: the program (None if there was none) and how it went."""

    program: str | None
    outcome: str
    call_id: int | None = None
    finish_reason: str | None = None


class ProceduralCoder:
    name = "procedural"

    async def write(self, store: Store, job: Job, round_: int, prev: Previous | None) -> Reply:
        subject = job.photo.subject or "flower"
        source = None
        if prev is not None and prev.program:
            source = procedural.revise_program(
                prev.program, job.analysis, prev.measures, round_, prev.violations
            )
        if source is None:  # the first round, or a parent without its plan: paint afresh
            source = procedural.generate_program(
                job.analysis, derive_seed(job.seed, round_), subject
            )
        return Reply(source, "ok")


class ModelCoder:
    def __init__(self, cfg: llm.ModelConfig, endpoints: llm.Endpoints) -> None:
        self.cfg = cfg
        self.name = cfg.name
        self.endpoints = endpoints

    def messages(self, job: Job, round_: int, prev: Previous | None) -> list[dict[str, Any]]:
        subject = job.photo.subject or "flower"
        brief = job.analysis.brief()
        images = []
        if prev is None or not prev.program:
            text = first_round_prompt(subject, brief, sees_photo=self.cfg.accepts_images)
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
                    "Render measurements: " + _measures_line(prev.measures)
                    if prev.png
                    else "Your sketch produced no image."
                )
            critique = prev.critique
            text = llm.prompt(
                "revise.md",
                subject=subject,
                round=round_ + 1,
                rounds=job.rounds,
                program=program_for_revision(prev.program),
                render_note=render_note,
                gate_summary="accepted" if prev.accepted else "rejected",
                violations=_violation_lines(prev.violations) or "(no violations)",
                scores=json.dumps(critique.scores) if critique else "(none)",
                advice=critique.advice if critique else "(none)",
                brief=brief,
            )
        user: str | list = [{"type": "text", "text": text}, *images] if images else text
        return [
            {"role": "system", "content": coder_system_prompt()},
            {"role": "user", "content": user},
        ]

    async def write(self, store: Store, job: Job, round_: int, prev: Previous | None) -> Reply:
        key = job.key(round_)
        reused = llm.paid_reply(store, key)
        if reused is not None:  # a crash after the model answered: do not pay twice
            outcome, program = await classify_off_loop(reused[1])
            return Reply(program, outcome, reused[0], reused[1].finish_reason)
        temperature = job.temperature
        result = await llm.chat(
            store,
            self.endpoints,
            self.cfg,
            self.messages(job, round_, prev),
            purpose="coder",
            temperature=temperature if temperature is not None else self.cfg.temperatures[0],
            job_key=key,
        )
        # a failure that stops the model (a bad key, no credit, ...) disabled it in llm.chat
        outcome, program = await classify_off_loop(result)
        return Reply(program, outcome, result.call_id, result.finish_reason)


def coder_system_prompt() -> str:
    """The coder's system prompt; the env's text rules it names come from the rules' own list."""
    names = ", ".join(f"`{name}`" for name in ENV_EXTERNAL_ACCESS)
    return llm.prompt("system.md", env_text_rules=names)


def first_round_prompt(subject: str, brief: str, sees_photo: bool) -> str:
    """The user prompt of a first round: paint `subject`, from the photo or its analysis.

    The training sets of a release (pool/dataset/training_prompts.py) ask the same."""
    note = (
        "The reference photo is attached."
        if sees_photo
        else "You cannot see the photo; paint from the analysis below."
    )
    return llm.prompt("generate.md", subject=subject, photo_note=note, brief=brief)


def coder_outcome(store: Store, call_id: int | None) -> str:
    """How a stored coder reply classifies (ok, truncated, ...); 'ok' when there was no call."""
    result = llm.recorded_reply(store, call_id) if call_id else None
    return llm.classify(result, extract_program)[0] if result is not None else "ok"


def _violation_lines(violations: list[Violation]) -> str:
    return "\n".join(
        f"- [{v.code}] {v.message}" + (f" (line {v.line})" if v.line else "") for v in violations
    )


def _measures_line(measures: dict[str, Any]) -> str:
    keys = ("coverage", "palette_distance", "silhouette_iou", "edge_softness", "layering", "centre")
    return ", ".join(f"{k} {measures[k]}" for k in keys if k in measures) or "(not measured)"
