"""The pairwise judge, with the RL environment's semantics: which is the better watercolour?

* The prompt (pool/reward/prompts/judge.md, criteria in judge_criteria.md) asks which of two
  paintings is the better watercolour, judging only how they are painted.
* The reply follows a JSON schema that names `winner` (A or B) first and then a reason of at
  most 20 words, so a reply cut short still carries its verdict. Temperature 0, 220 tokens.
  The prompt asks for that JSON in words whenever the request asks for JSON.
* The verdict is read by pool/reward/verdict.py (JSON, a tool call, [[A]], \\boxed{B}, two
  scores, a phrase...); a call with none says why (pool/reward/judge_reasons.py).
* Every pair is judged in both orders. When the orders disagree about the painting (the judge
  picked the same slot twice), the pair is a tie worth 0.5: position bias shows up exactly
  where the judge has no real preference. A pair whose either order gave no verdict is
  unresolved and counts for nothing.

The model judge is any OpenAI-compatible vision endpoint: the models file entry with
`"roles": ["judge"]` (by default Qwen/Qwen3-VL-30B-A3B-Instruct on the HF router). Every call is
logged through generators.llm under a job key made of the two PNGs' sha256, so a rerun reuses
every reply already paid for. `HeuristicJudge` (pool/reward/judge_heuristic.py) needs no key.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any, Protocol

from generators import llm
from pool.reward.judge_reasons import why_no_verdict
from pool.reward.verdict import parse_verdict, read_verdict
from refpool.core.errors import RefpoolError
from refpool.core.store import Store, sha256_bytes
from refpool.core.store.calibration import JudgedPair, get_pair, save_pair

DEFAULT_JUDGE_MODEL = "Qwen/Qwen3-VL-30B-A3B-Instruct"
JUDGE_MAX_TOKENS = 220  # room for the capped reason; the verdict comes first anyway
JUDGE_TEMPERATURE = 0.0
HEURISTIC = "heuristic"
JSON_MODES = ("json_object", "json_schema")  # structured modes: the prompt must say JSON

__all__ = ["parse_verdict"]  # read in pool.reward.verdict, named here too

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "winner": {"type": "string", "enum": ["A", "B"]},
        "reason": {"type": "string", "maxLength": 160},  # about 20 words
    },
    "required": ["winner", "reason"],
    "additionalProperties": False,
}


class JudgeError(RefpoolError, RuntimeError):
    """The judge cannot be used as configured; the message says what to change."""


def judge_label(name: str, heuristic: bool) -> str:
    """How a judge is named wherever its numbers appear: the heuristic one says what it is."""
    return "heuristic (offline measurements, not a model)" if heuristic else name


def judge_prompt(criteria: str | None = None, structured: str = "none") -> str:
    """The judge's question, with the domain criteria (the packaged ones by default) and the
    answer's form: JSON when the request asks for JSON (`structured` json_object or
    json_schema; OpenAI refuses json_object when the messages never say "JSON")."""
    folder = resources.files("pool.reward").joinpath("prompts")
    if criteria is None:
        criteria = folder.joinpath("judge_criteria.md").read_text("utf-8").strip()
    form = "judge_answer_json.md" if structured in JSON_MODES else "judge_answer_text.md"
    answer = folder.joinpath(form).read_text("utf-8").strip()
    text = folder.joinpath("judge.md").read_text("utf-8")
    return Template(text).safe_substitute(criteria=criteria, answer=answer).strip()


def structured_mode(cfg: llm.ModelConfig) -> str:
    """The structured-output mode a judge's requests carry (the entry's, else the role's)."""
    return cfg.structured_output or llm.STRUCTURED_DEFAULT.get("judge", "none")


@dataclass(frozen=True)
class Verdict:
    winner: str | None  # "A" (the first image), "B", or None: no usable answer
    reason: str = ""  # the judge's reason, or why there is no verdict (judge_reasons)
    call_id: int | None = None


class PairJudge(Protocol):
    name: str  # shown to people, e.g. the model id or "heuristic"
    key: str  # identifies the judge and its prompt in stored verdicts
    heuristic: bool

    async def verdict(self, first: bytes, second: bytes, repeat: int = 0) -> Verdict: ...


class VLMJudge:
    """A vision model behind an OpenAI-compatible endpoint, called through generators.llm."""

    heuristic = False

    def __init__(
        self,
        store: Store,
        cfg: llm.ModelConfig,
        endpoints: llm.Endpoints | None = None,
        criteria: str | None = None,
    ) -> None:
        if not cfg.accepts_images:
            raise JudgeError(
                f"judge {cfg.name!r} must accept images: if its model does, set accepts_images"
                " to true in its models-file entry",
                hint=("choose a judge", "choose a models file"),
            )
        self.store = store
        # The environment's settings, whatever the entry says: temperature 0, 220 tokens.
        self.cfg = dataclasses.replace(cfg, max_tokens=JUDGE_MAX_TOKENS)
        self.endpoints = endpoints or llm.Endpoints()
        self.structured_mode = structured_mode(cfg)
        self.prompt = judge_prompt(criteria, self.structured_mode)
        self.name = cfg.model
        prompt_hash = hashlib.sha256(self.prompt.encode()).hexdigest()[:8]
        self.key = f"{cfg.model}#{prompt_hash}"

    @property
    def concurrency(self) -> int:
        """Requests this judge may have in flight (its endpoint's limit)."""
        return self.endpoints.limit(self.cfg)

    async def verdict(self, first: bytes, second: bytes, repeat: int = 0) -> Verdict:
        """The winner of `first` against `second`; `repeat` > 0 asks again, in a call of its
        own (pool/reward/judge_stability.py), never reusing the first asking's reply."""
        job_key = f"judge/{self.key}/{sha256_bytes(first)[:16]}/{sha256_bytes(second)[:16]}"
        job_key += f"/repeat{repeat}" if repeat else ""
        reused = llm.paid_reply(self.store, job_key, "judge")
        if reused is not None:  # paid for before a crash: never pay twice
            result = reused[1]
        else:
            messages = [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": self.prompt},
                        llm.image_part(first, "image/png"),
                        llm.image_part(second, "image/png"),
                    ],
                }
            ]
            result = await llm.chat(
                self.store,
                self.endpoints,
                self.cfg,
                messages,
                purpose="judge",
                temperature=JUDGE_TEMPERATURE,
                # the entry's structured_output (json_schema unless a server refuses it)
                extra=llm.response_format(self.cfg, "judge", VERDICT_SCHEMA, "verdict"),
                job_key=job_key,
            )
        if result.outcome != "ok":  # a model that refuses for good is stopped by llm.chat
            return Verdict(None, why_no_verdict(result, None, self.structured_mode), result.call_id)
        reading = read_verdict(result.reply)  # the answer and tool calls, never the reasoning
        if reading.winner is None:
            why = why_no_verdict(result, reading, self.structured_mode)
            return Verdict(None, why, result.call_id)
        return Verdict(reading.winner, reading.reason, result.call_id)


def pair_score(x_first: str | None, y_first: str | None) -> float | None:
    """x's score from both orders: 1 won both, 0 lost both, 0.5 disagreement, None unresolved."""
    if x_first is None or y_first is None:
        return None
    return ((x_first == "A") + (y_first == "B")) / 2


async def judge_pair(store: Store, judge: PairJudge, x: bytes, y: bytes) -> JudgedPair:
    """Judge x against y in both orders, storing the result; a stored resolved pair is reused."""
    x_sha, y_sha = sha256_bytes(x), sha256_bytes(y)
    stored = get_pair(store, judge.key, x_sha, y_sha)
    if stored is not None and stored.resolved:
        return stored
    a, b = await asyncio.gather(judge.verdict(x, y), judge.verdict(y, x))
    pair = JudgedPair(
        judge=judge.key,
        x_sha=x_sha,
        y_sha=y_sha,
        x_first=a.winner,
        y_first=b.winner,
        score=pair_score(a.winner, b.winner),
        call_ids=tuple(c for c in (a.call_id, b.call_id) if c is not None),
        reasons=(a.reason, b.reason),
    )
    save_pair(store, pair)
    return pair
