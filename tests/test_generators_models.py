"""Model coders and the VLM critic through the real openai client against a loopback server."""

from __future__ import annotations

import json
from collections import deque

import pytest

from generators.batch import generate
from generators.llm import ChatResult, classify, load_models
from generators.loopback import LoopbackOpenAI
from refpool.intake.photos import import_folder
from renderer import extract_program

GOOD = """A red five-petal flower.
```js
function setup() {
  createCanvas(600, 600, WEBGL);
  angleMode(DEGREES);
  noLoop();
}
function draw() {
  translate(-width / 2, -height / 2);
  background('#f6efe2');
  brush.noStroke();
  for (let i = 0; i < 5; i++) {
    brush.fill('#e2583e', 200);
    brush.fillBleed(0.25, 'out');
    brush.circle(300 + cos(i * 72) * 60, 300 + sin(i * 72) * 60, 55, 0.3);
  }
  brush.fill('#8e1b2c', 225);
  brush.circle(300, 300, 28);
}
```"""

GATE_FAIL = GOOD.replace("brush.circle(300, 300, 28);", "rect(280, 280, 40, 40);")
CRITIC_JSON = json.dumps(
    {
        "scores": {"fidelity": 6, "watercolour": 7, "composition": 8, "coverage": 5},
        "advice": "Enlarge the petals by a third and add a paler outer ring of #f7b59b.",
        "summary": "a decent start",
    }
)


pytestmark = pytest.mark.usefixtures("fast_retries")  # the shared fixture in conftest


class Scripted:
    """Coder replies in order; the critic model always answers with CRITIC_JSON."""

    def __init__(self, coder_script):
        self.coder = deque(coder_script)

    def __call__(self, body):
        if body["model"] == "loopback-vlm":
            return {"content": CRITIC_JSON}
        return self.coder.popleft() if self.coder else {"content": GOOD}


def write_models(path, base_url, coder_timeout=30, images=False, key_env=None):
    common = {
        "base_url": base_url,
        "key_env": key_env,
        "max_tokens": 2400,
        "concurrency": 2,
        "temperatures": [0.6, 0.9, 1.1],
        "price_per_mtok": {"input": 1.0, "output": 2.0},
    }
    data = {
        "models": {
            "coder": common
            | {
                "model": "loopback-coder",
                "timeout_s": coder_timeout,
                "accepts_images": images,
                "roles": ["coder"],
            },
            "vlm": common
            | {
                "model": "loopback-vlm",
                "timeout_s": 30,
                "accepts_images": True,
                "roles": ["critic"],
            },
        }
    }
    path.write_text(json.dumps(data))
    return str(path)


def _rows(store):
    return store.query("SELECT * FROM candidates ORDER BY round, id")


@pytest.mark.browser
def test_429_gate_failure_feedback_and_empty_reasoning(
    store, photo_id, renderer, tmp_path, monkeypatch
):
    monkeypatch.setenv("LOOPBACK_SECRET", "sk-test-do-not-leak")
    script = Scripted(
        [
            {"status": 429},  # rate limited, then retried
            {"content": GATE_FAIL},
            {"content": GOOD, "tokens": (900, 400)},
            {"content": "", "reasoning": "Let me think about petals... " * 20, "finish": "length"},
        ]
    )
    with LoopbackOpenAI(default=script) as server:
        models = write_models(
            tmp_path / "models.json", server.base_url, images=True, key_env="LOOPBACK_SECRET"
        )
        summary = generate(
            store,
            photo_ids=[photo_id],
            generators=("coder",),
            candidates=1,
            rounds=3,
            renderer=renderer,
            progress=False,
            critic="vlm",
            models_file=models,
        )
        coder_requests = [r for r in server.requests if r["model"] == "loopback-coder"]
        critic_requests = [r for r in server.requests if r["model"] == "loopback-vlm"]
    rows = _rows(store)
    assert [r["round"] for r in rows] == [0, 1, 2]
    r0, r1, r2 = rows
    assert r0["outcome"] == "ok" and not r0["accepted"]
    assert "p5_primitive" in {v["code"] for v in json.loads(r0["violations"])}
    # round 1's prompt carried the violation by code and message, plus the previous program
    revise_text = json.dumps(coder_requests[2]["messages"])
    assert "[p5_primitive]" in revise_text and "rect(280, 280, 40, 40)" in revise_text
    assert r1["accepted"] and r1["parent_id"] == r0["id"] and r1["png_sha"]
    assert r2["outcome"] == "empty_reasoning" and r2["parent_id"] == r1["id"]
    # the VLM critic saw photo + render as images and its critique was stored
    assert len(critic_requests) == 1
    parts = critic_requests[0]["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "image_url"]
    critique = json.loads(r1["critique"])
    assert critique["critic"] == "vlm" and critique["scores"]["composition"] == 8
    calls = store.query("SELECT * FROM model_calls ORDER BY id")
    assert [c["outcome"] for c in calls if c["purpose"] == "coder"] == [
        "http_error",
        "ok",
        "ok",
        "ok",
    ]
    assert "429" in calls[0]["error"]
    auth = {h.get("Authorization") or h.get("authorization") for h in server.headers}
    assert auth == {"Bearer sk-test-do-not-leak"}  # the key was sent to the endpoint ...
    stored = json.dumps([dict(c) for c in calls] + [dict(r) for r in rows])  # ... never stored
    assert "sk-test-do-not-leak" not in stored and "base64," not in stored
    assert "sha256:" in stored  # images replaced by their hash
    good_call = next(c for c in calls if c["id"] == r1["coder_call_id"])
    assert good_call["prompt_tokens"] == 900 and good_call["cost_usd"] == pytest.approx(0.0017)
    assert r2["coder_call_id"] and calls[-1]["reasoning"].startswith("Let me think")
    m = summary["models"]["coder"]
    assert (m["candidates"], m["accepted"], m["rejected"], m["infra_errors"]) == (3, 1, 2, 0)
    assert m["calls"] == 4 and m["failures"] == {"empty_reasoning": 1, "gate": 1}
    assert m["pass_rate_by_round"] == {"0": 0.0, "1": 1.0, "2": 0.0}


@pytest.mark.browser
def test_no_fence_then_timeout_then_resume(store, photo_id, renderer, tmp_path):
    script = Scripted(
        [{"content": "I would paint a lovely red flower with soft petals."}]
        + [{"delay": 2, "content": GOOD}] * 4
    )
    with LoopbackOpenAI(default=script) as server:
        models = write_models(tmp_path / "models.json", server.base_url, coder_timeout=0.4)
        summary = generate(
            store,
            photo_ids=[photo_id],
            generators=("coder",),
            candidates=1,
            rounds=2,
            renderer=renderer,
            progress=False,
            models_file=models,
        )
        second_prompt = json.dumps(server.requests[1]["messages"])
    r0, r1 = _rows(store)
    assert r0["outcome"] == "no_code" and r0["program_sha"] is None
    assert "[no_code_block]" in second_prompt  # the failure was fed back
    assert r1["outcome"] == "timeout"
    timeouts = store.query("SELECT * FROM model_calls WHERE outcome = 'timeout'")
    assert len(timeouts) == 4  # retried with backoff, every attempt recorded
    assert summary["models"]["coder"]["transport_errors"] == 1
    # a rerun finishes the unfinished round in place and keeps the finished one
    with LoopbackOpenAI(default=Scripted([])) as server:
        models = write_models(tmp_path / "models.json", server.base_url)
        again = generate(
            store,
            photo_ids=[photo_id],
            generators=("coder",),
            candidates=1,
            rounds=2,
            renderer=renderer,
            progress=False,
            models_file=models,
        )
        assert len(server.requests) == 1
    rows = _rows(store)
    assert [r["id"] for r in rows] == [r0["id"], r1["id"]]
    assert rows[1]["outcome"] == "ok" and rows[1]["accepted"]
    assert again["models"]["coder"]["accepted"] == 1 and again["new"] == 1


@pytest.mark.browser
def test_paid_reply_is_reused_after_a_crash(store, photo_id, renderer, tmp_path):
    with LoopbackOpenAI(script=[{"content": GOOD}]) as server:
        models = write_models(tmp_path / "models.json", server.base_url)
        # simulate kill -9 after the model answered but before the candidate row was written
        from generators import coders

        real_finish = coders.ModelCoder.write

        async def crash_after_call(self, store_, job, round_, prev):
            await real_finish(self, store_, job, round_, prev)
            raise KeyboardInterrupt

        coders.ModelCoder.write = crash_after_call
        try:
            with pytest.raises(KeyboardInterrupt):
                generate(
                    store,
                    photo_ids=[photo_id],
                    generators=("coder",),
                    rounds=1,
                    renderer=renderer,
                    progress=False,
                    models_file=models,
                )
        finally:
            coders.ModelCoder.write = real_finish
        assert not store.query("SELECT 1 FROM candidates")
        generate(
            store,
            photo_ids=[photo_id],
            generators=("coder",),
            rounds=1,
            renderer=renderer,
            progress=False,
            models_file=models,
        )
        assert len(server.requests) == 1  # not paid twice
    (row,) = _rows(store)
    assert row["accepted"] and row["coder_call_id"] == 1


def test_outcomes_are_classified_distinctly():
    def c(**kw):
        return classify(ChatResult(outcome="ok", **kw), extract_program)[0]

    assert c(content=GOOD, finish_reason="stop") == "ok"
    assert c(content="", reasoning="thinking...", finish_reason="length") == "empty_reasoning"
    assert c(content="Here is a flower idea, no code.") == "no_code"
    assert c(content="I'm sorry, I can't help with that.") == "refusal"
    assert c(content=GOOD[: len(GOOD) // 2], finish_reason="length") == "truncated"
    assert classify(ChatResult(outcome="timeout"), extract_program)[0] == "timeout"


def test_presets_are_data_and_missing_keys_are_named(monkeypatch):
    models = load_models()
    assert {"glm-5.2", "kimi-k3", "qwen3-coder-next"} <= set(models)
    glm = models["glm-5.2"]
    assert glm.base_url.startswith("https://router.huggingface.co") and glm.max_tokens == 2400
    assert glm.temperatures == (0.6, 0.9, 1.1) and glm.timeout_s == 180
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(RuntimeError, match=r"\$HF_TOKEN"):
        glm.api_key()


def test_unknown_generator_is_a_clear_error(store, photo_id):
    with pytest.raises(ValueError, match="unknown generator 'nope'"):
        generate(store, generators=("nope",), renderer=object(), progress=False)


def test_vlm_critique_parsing_is_strict_about_scores():
    from generators.critics import parse_critique

    fenced = "Here you go:\n```json\n" + CRITIC_JSON + "\n```"
    critique = parse_critique(fenced, "vlm")
    assert critique.scores == {"fidelity": 6, "watercolour": 7, "composition": 8, "coverage": 5}
    loose = (
        '{"fidelity": 11, "watercolor": 3, "composition": 2, "coverage": 1, "advice": ["a", "b"]}'
    )
    with pytest.raises(ValueError, match="ambiguous"):  # 11 of 10, or 11 of 100: never clamped
        parse_critique(loose, "v")
    with pytest.raises(ValueError, match="composition"):
        parse_critique('{"scores": {"fidelity": 5, "watercolour": 5, "coverage": 5}}', "v")
    with pytest.raises(ValueError):
        parse_critique("", "v")


@pytest.mark.browser
def test_requests_per_endpoint_are_limited(store, sample_photos, renderer, tmp_path):
    import_folder(store, sample_photos)
    with LoopbackOpenAI(default=lambda body: {"delay": 0.4, "content": GOOD}) as server:
        path = tmp_path / "models.json"
        write_models(path, server.base_url)
        data = json.loads(path.read_text())
        data["models"]["coder"]["concurrency"] = 1  # one request at a time to this endpoint
        path.write_text(json.dumps(data))
        summary = generate(
            store,
            generators=("coder",),
            candidates=1,
            rounds=1,
            concurrency=3,
            renderer=renderer,
            progress=False,
            models_file=str(path),
        )
        assert len(server.requests) == 3 and server.max_in_flight == 1
    assert summary["models"]["coder"]["accepted"] == 3
