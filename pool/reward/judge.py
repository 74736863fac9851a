"""The pairwise judge, with the RL environment's semantics: which is the better watercolour?

* The prompt (pool/reward/prompts/judge.md, criteria in judge_criteria.md) asks which of two
  paintings is the better watercolour, judging only how they are painted.
* The reply follows a JSON schema that names `winner` (A or B) first and then a reason of at
  most 20 words, so a reply cut short still carries its verdict. Temperature 0, 220 tokens.
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
import re
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any, Protocol

from generators import llm
from refpool.core import loose_json
from refpool.core.errors import RefpoolError
from refpool.core.reply import strip_reasoning
from refpool.core.store import Store, sha256_bytes
from refpool.core.store.calibration import JudgedPair, get_pair, save_pair

DEFAULT_JUDGE_MODEL = "Qwen/Qwen3-VL-30B-A3B-Instruct"
JUDGE_MAX_TOKENS = 220  # room for the capped reason; the verdict comes first anyway
JUDGE_TEMPERATURE = 0.0
HEURISTIC = "heuristic"

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


def judge_prompt(criteria: str | None = None) -> str:
    """The judge's question, with the domain criteria (the packaged ones by default)."""
    folder = resources.files("pool.reward").joinpath("prompts")
    if criteria is None:
        criteria = folder.joinpath("judge_criteria.md").read_text("utf-8").strip()
    text = folder.joinpath("judge.md").read_text("utf-8")
    return Template(text).safe_substitute(criteria=criteria).strip()


# How judges name a painting: A/B, first/second, 1/2 (a bare letter only in capitals).
_SIDE = {"a": "A", "b": "B", "1": "A", "2": "B", "first": "A", "second": "B"}
_NOUN = r"(?:image|painting|picture|option|candidate|watercolou?r)"
_PICK = rf"(?:{_NOUN}\s+#?([ab12])\b|(?:the\s+)?(first|second)\b(?:\s+{_NOUN})?|(?-i:\b([AB])\b))"
_KEYS = ("winner", "verdict", "choice", "answer", "better", "preferred", "preference", "best")
# Strong: MT-Bench's [[A]], a labelled answer, a cut-off JSON verdict. Weak: a phrase.
_STRONG = (
    re.compile(r"\[\[\s*([AB])\s*\]\]", re.I),
    re.compile(
        rf"\b(?:final\s+)?(?:{'|'.join(_KEYS)}|better\s+(?:one|{_NOUN}))[\"']?\s*(?:is|:|=)"
        rf"\s*[\"'*]*\s*{_PICK}",
        re.I,
    ),
)
_WEAK = (
    re.compile(
        rf"{_PICK}\s+(?:is|looks|seems|appears|reads|feels)\s+(?:\w+ly\s+)?(?:the\s+)?"
        r"(?:better|stronger|superior|preferable|preferred|winner|more\s+(?:successful|"
        r"convincing|accomplished|skill?ful))\b",
        re.I,
    ),
    re.compile(rf"\b(?:prefer|choose|chose|pick|select|go\s+with)\s+{_PICK}", re.I),
    re.compile(rf"{_PICK}\s+wins\b", re.I),
)
_NEGATED = re.compile(r"\b(?:not|nor|neither|never|n't)\W+(?:\w+\W+)?$", re.I)
_BARE = re.compile(rf"^[\W_]*(?:(?:winner|answer|verdict)\W+)?{_PICK}[\W_]*$", re.I)


def _side(match: re.Match[str]) -> str | None:
    picked = next((g for g in reversed(match.groups()) if g), None)
    return _SIDE.get(picked.lower()) if picked else None


def _value_side(value: Any) -> str:
    """A JSON verdict value as A or B; "?" for a value that names neither (a tie, "both")."""
    plain = str(value).strip(" \t\n\"'.*()[]").lower()
    if plain in _SIDE:  # "b", "2", "Second"
        return _SIDE[plain]
    found = _BARE.match(str(value).strip()) or re.match(rf"^\W*{_PICK}", str(value).strip(), re.I)
    side = _side(found) if found else None
    return side or "?"


def _json_verdicts(answer: str) -> tuple[list[str], str, str]:
    """(sides named by JSON objects, the reason given, the text outside those objects)."""
    sides, reason, outside, last = [], "", [], 0
    for start, end in loose_json.objects(answer):
        try:
            data = loose_json.load(answer[start:end])
        except ValueError:
            continue
        inner = (
            [data] + [v for v in data.values() if isinstance(v, dict)]
            if isinstance(data, dict)
            else []
        )
        for item in inner:
            keys = {str(k).lower(): v for k, v in item.items()}
            named = [keys[k] for k in _KEYS if k in keys and not isinstance(keys[k], dict)]
            if named:
                sides.append(_value_side(named[0]))
                why = next(
                    (keys[k] for k in ("reason", "explanation", "rationale", "why") if k in keys),
                    "",
                )
                reason = reason or str(why)
        outside.append(answer[last:start])
        last = end
    outside.append(answer[last:])
    return sides, reason, "".join(outside)


def _phrase_sides(text: str, patterns: tuple[re.Pattern[str], ...]) -> list[str]:
    sides = []
    for pattern in patterns:
        for match in pattern.finditer(text):
            if _NEGATED.search(text[max(0, match.start() - 24) : match.start()]):
                continue  # "neither A nor B is better"
            side = _side(match)
            if side:
                sides.append(side)
    return sides


def parse_verdict(text: str) -> tuple[str | None, str]:
    """(winner A/B or None, reason) from a reply's final answer (reasoning never counts).

    Read, strongest evidence first: JSON (`{"winner": "b"}`, "Image B"), MT-Bench's `[[A]]`, a
    labelled answer ("Winner: A"), a cut-off JSON verdict; then a phrase ("Image B is better",
    "I prefer A"); then a bare `A`. Evidence of one strength that names both paintings, or a
    verdict that names neither (a tie), is no verdict: the pair stays unresolved.
    """
    answer = strip_reasoning(text or "").strip()
    json_sides, reason, outside = _json_verdicts(answer)
    strong = json_sides + _phrase_sides(outside, _STRONG)
    first_line = next((line for line in answer.splitlines() if line.strip()), "")
    bare = _BARE.match(first_line)
    for sides in (strong, _phrase_sides(outside, _WEAK), [_side(bare) or "?"] if bare else []):
        if sides:
            winner = sides[0] if len(set(sides)) == 1 and sides[0] != "?" else None
            return winner, (reason or answer)[:200]
    return None, answer[:200]


@dataclass(frozen=True)
class Verdict:
    winner: str | None  # "A" (the first image), "B", or None: no usable answer
    reason: str = ""
    call_id: int | None = None


class PairJudge(Protocol):
    name: str  # shown to people, e.g. the model id or "heuristic"
    key: str  # identifies the judge and its prompt in stored verdicts
    heuristic: bool

    async def verdict(self, first: bytes, second: bytes) -> Verdict: ...


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
        self.prompt = judge_prompt(criteria)
        self.name = cfg.model
        prompt_hash = hashlib.sha256(self.prompt.encode()).hexdigest()[:8]
        self.key = f"{cfg.model}#{prompt_hash}"
        self.last_error: str | None = None  # the latest failed call, for the summary

    @property
    def concurrency(self) -> int:
        """Requests this judge may have in flight (its endpoint's limit)."""
        return self.endpoints.limit(self.cfg)

    async def verdict(self, first: bytes, second: bytes) -> Verdict:
        job_key = f"judge/{self.key}/{sha256_bytes(first)[:16]}/{sha256_bytes(second)[:16]}"
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
            said = f"{result.outcome}: {llm.explain(result.error, result.http_status)}"
            if result.call_id is not None or self.last_error is None:  # a call's own error
                self.last_error = said
            return Verdict(None, said, result.call_id)
        winner, reason = parse_verdict(result.reply.answer)  # never the reasoning
        return Verdict(winner, reason, result.call_id)


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
